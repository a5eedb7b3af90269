package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// slowList holds every tools/list until release is closed.
type slowList struct {
	next    http.Handler
	release chan struct{}
}

func (s *slowList) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if bytes.Contains(b, []byte(`"tools/list"`)) {
			<-s.release
		}
	}
	s.next.ServeHTTP(w, r)
}

// On a first start (no cache), the first tools/list waits for the
// upstream's first listing, so a client that lists once sees its tools;
// with cold_start_wait: 0 it answers at once, without them.
func TestFirstListWaitsForAColdUpstream(t *testing.T) {
	for _, wait := range []string{"30s", "0s"} {
		t.Run("cold_start_wait "+wait, func(t *testing.T) {
			raw, _ := upstreamtest.NewRaw(t, `{"name":"lookup","inputSchema":{"type":"object"}}`)
			slow := &slowList{next: raw, release: make(chan struct{})}
			up := upstreamtest.NewServer(t, slow)
			doc := fmt.Sprintf("cold_start_wait: %s\nupstreams:\n  - {id: remote, url: %q}\n", wait, up.URL())
			gw, err := server.New(context.Background(), server.Options{Config: parse(t, doc), Store: memStore(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { gw.Close() })
			t.Cleanup(func() { close(slow.release) })
			gw.Start(context.Background())
			cs := connect(t, serve(t, gw), "2025-11-25")
			if wait == "0s" {
				if got := toolList(t, cs); strings.Contains(got, "lookup") {
					t.Fatalf("listed before the upstream answered: %s", got)
				}
				return
			}
			listed := make(chan string, 1)
			go func() { listed <- toolList(t, cs) }()
			select {
			case got := <-listed:
				t.Fatalf("tools/list answered before the upstream was listed: %s", got)
			case <-time.After(300 * time.Millisecond): // held, as it should be
			}
			slow.release <- struct{}{}
			if got := <-listed; !strings.Contains(got, "mcp__remote__lookup") {
				t.Fatalf("the first tools/list lacks the upstream's tool: %s", got)
			}
		})
	}
}
