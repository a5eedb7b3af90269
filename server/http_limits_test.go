package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

// listen runs Gateway.ServeHTTP, as `legate serve` does, for a gateway of
// the config doc, and returns the address it listens on.
func listen(t *testing.T, doc string) string {
	t.Helper()
	return listenWith(t, doc, server.Options{})
}

// listenWith is listen with the gateway's other options.
func listenWith(t *testing.T, doc string, opts server.Options) string {
	t.Helper()
	cfg, err := config.Parse([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Config, opts.Store = cfg, memStore(t)
	gw, err := server.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gw.ServeHTTP(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		gw.Close()
	})
	return ln.Addr().String()
}

// heldFor writes head to a new connection to addr, then drip one byte a
// second (none if drip is ""), and returns how long the server kept the
// connection open (whatever it answered), at most 10s.
func heldFor(t *testing.T, addr, head, drip string) time.Duration {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; i < len(drip); i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
			if _, err := conn.Write([]byte{drip[i]}); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(start.Add(10 * time.Second))
	_, err = io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Logf("still open after 10s")
	}
	return time.Since(start)
}

const slowLimits = "http: {read_header_timeout: 1s, read_timeout: 2s, idle_timeout: 1s}\n"

func TestSlowHeadersAreCutOff(t *testing.T) {
	addr := listen(t, testConfig+slowLimits)
	held := heldFor(t, addr, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", strings.Repeat("a", 30))
	if held > 4*time.Second {
		t.Fatalf("a client trickling its headers was held %s (read_header_timeout 1s)", held)
	}
}

func TestSlowBodyIsCutOff(t *testing.T) {
	addr := listen(t, testConfig+slowLimits)
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"
	held := heldFor(t, addr, head, strings.Repeat(" ", 99))
	if held > 5*time.Second {
		t.Fatalf("a client trickling its body was held %s (read_timeout 2s)", held)
	}
}

// The panel's own listener (panel.listen) is bounded by the same http:
// timeouts as /mcp's: a client trickling its headers or its login form is
// cut off, not held.
func TestPanelListenerIsBounded(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	listenWith(t, "panel: {listen: \"127.0.0.1:0\"}\n"+slowLimits, server.Options{AdminToken: "panel-admin", Logger: log})
	var addr string
	waitFor(t, "the panel's address in the log", func() bool {
		m := regexp.MustCompile(`"msg":"legate panel","url":"http://([0-9.:]+)/"`).FindStringSubmatch(logs.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	if held := heldFor(t, addr, "GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", strings.Repeat("a", 30)); held > 4*time.Second {
		t.Errorf("a client trickling its headers to the panel was held %s (read_header_timeout 1s)", held)
	}
	head := "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nt"
	if held := heldFor(t, addr, head, strings.Repeat("a", 99)); held > 5*time.Second {
		t.Errorf("a client trickling its login form to the panel was held %s (read_timeout 2s)", held)
	}
}

func TestIdleConnectionsAreClosed(t *testing.T) {
	addr := listen(t, testConfig+slowLimits)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	start := time.Now()
	conn.SetReadDeadline(start.Add(10 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v after %s, want EOF", err, time.Since(start))
	}
	if el := time.Since(start); el > 4*time.Second {
		t.Fatalf("an idle keep-alive connection was closed after %s (idle_timeout 1s)", el)
	}
}

// A call that outlasts read_timeout, answered on an event stream, is not
// cut: the read deadline ends with the request's body.
func TestLongCallsOutliveTheReadTimeout(t *testing.T) {
	doc := "approvals: {wait: 3s}\nconnectors:\n  - {id: s, type: echo-test}\n" + slowLimits
	url := "http://" + listen(t, doc) + "/mcp"
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			start := time.Now()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "s__fail", Arguments: map[string]any{"text": version}})
			if err != nil {
				t.Fatalf("after %s: %v", time.Since(start), err)
			}
			if code, _ := errorCode(t, res); code != "APPROVAL_PENDING" || time.Since(start) < 3*time.Second {
				t.Fatalf("after %s: %v", time.Since(start), structured(t, res))
			}
		})
	}
}

func TestRequestBodiesAreBounded(t *testing.T) {
	url := "http://" + listen(t, testConfig+"http: {max_body_bytes: 2000}\n") + "/mcp"
	pad := strings.Repeat("x", 5000)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"},"pad":"` + pad + `"}}`
	if resp := post(t, url, "", "application/json, text/event-stream", init); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("initialize of 5000 bytes: status %d, want 413", resp.StatusCode)
	}
	// The fast path's stateless tools/list too.
	for size, want := range map[int]int{5000: http.StatusRequestEntityTooLarge, 100: http.StatusOK} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{}},"pad":"` + strings.Repeat("x", size) + `"}}`
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("stateless tools/list padded with %d bytes: status %d, want %d", size, resp.StatusCode, want)
		}
	}
}
