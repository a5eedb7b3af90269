package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upconfig"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// requireHeader serves h only to requests carrying the header value.
func requireHeader(name, value string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(name) != value {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// An unset or empty header_env variable fails that upstream alone, with
// an error naming the variable; the others serve; the value of a set one
// appears in no log line, error, status or store file.
func TestHeaderEnv(t *testing.T) { bothPaths(t, headerEnv) }

func headerEnv(t *testing.T) {
	noLeaks(t)
	const secret = "Bearer s3cr3t-Value-7f1c9a"
	env := map[string]string{"UP_GOOD_TOKEN": secret, "UP_EMPTY_TOKEN": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	raw := &upstreamtest.Raw{}
	raw.SetTools(rawTool("ping"))
	raw.HandleCall(func(name string, args json.RawMessage) (json.RawMessage, error) {
		if name == "fail" {
			return nil, errors.New("the upstream refuses")
		}
		return json.RawMessage(`{"content":[{"type":"text","text":"pong"}]}`), nil
	})
	good := upstreamtest.NewServer(t, requireHeader("Authorization", secret, raw))
	gone := upstreamtest.NewServer(t, raw)
	gone.Stop()

	dir := t.TempDir()
	st := fileStore(t, dir)
	ctx := context.Background()
	// "unset" had tools cached before its variable went missing.
	if err := st.Upstreams().SaveCache(ctx, "unset", []store.CachedTool{{Name: "cached", Definition: []byte(`{"name":"cached","inputSchema":{"type":"object"}}`), Hash: "h"}}, nil, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	m := newManager(t, st, upstream.Options{LookupEnv: lookup, Logger: debugLogger(logs)},
		upstream.Config{ID: "good", URL: good.URL(), HeaderEnv: map[string]string{"Authorization": "UP_GOOD_TOKEN"}},
		upstream.Config{ID: "unset", URL: good.URL(), HeaderEnv: map[string]string{"Authorization": "UP_MISSING_TOKEN"}},
		upstream.Config{ID: "empty", URL: good.URL(), HeaderEnv: map[string]string{"X-Api-Key": "UP_EMPTY_TOKEN"}},
		upstream.Config{ID: "gone", URL: gone.URL(), HeaderEnv: map[string]string{"Authorization": "UP_GOOD_TOKEN"}},
	)
	m.Start(upstreamtest.Context(t))
	ping := waitTool(t, m, "good", "ping", 10*time.Second)

	var seen []string // every error text and status, to search for the value
	for _, tc := range []struct{ id, variable string }{{"unset", "UP_MISSING_TOKEN"}, {"empty", "UP_EMPTY_TOKEN"}} {
		st := status(t, m, tc.id)
		if !strings.Contains(st.LastError, tc.variable) {
			t.Errorf("%s: last error %q does not name %s", tc.id, st.LastError, tc.variable)
		}
		if _, err := m.Refresh(ctx, tc.id); err == nil || !errors.Is(err, upconfig.ErrHeaderEnv) || !strings.Contains(err.Error(), tc.variable) {
			t.Errorf("%s: refresh error %v, want one naming %s", tc.id, err, tc.variable)
		} else {
			seen = append(seen, err.Error())
		}
	}
	if !strings.Contains(logs.String(), "UP_MISSING_TOKEN") {
		t.Error("the missing variable is not logged")
	}
	// The cached tool of the unusable upstream stays listed; calling it fails
	// fast, naming the variable.
	cached := tool(m, "unset", "cached")
	if cached == nil {
		t.Fatal("cached tool of the unusable upstream dropped")
	}
	start := time.Now()
	_, err := call(m, cached, "x")
	if upstreamCode(err) != legate.CodeUpstreamUnavailable || !strings.Contains(err.Error(), "UP_MISSING_TOKEN") || time.Since(start) > time.Second {
		t.Errorf("call to the unusable upstream: %v after %s", err, time.Since(start))
	}
	seen = append(seen, errString(err))

	// The good upstream serves (the header reaches it).
	for range 3 {
		res, err := call(m, ping, "")
		if err != nil || upstreamtest.Text(res) != "pong" {
			t.Fatalf("good upstream: %v %v", res, err)
		}
	}
	if st := status(t, m, "good"); st.LastError != "" || st.Tools != 1 {
		t.Errorf("good status %+v", st)
	}
	// Failures with the value in play: an error the upstream answers, an
	// upstream that is down.
	_, err = m.Call(ctx, &upstream.Tool{Upstream: "good", Name: "fail"}, nil, upstream.Client{})
	seen = append(seen, errString(err))
	_, err = m.Refresh(ctx, "gone")
	if err == nil {
		t.Error("refreshing a stopped upstream succeeded")
	}
	seen = append(seen, errString(err))
	all, _ := m.Status(ctx)
	b, _ := json.Marshal(all)
	seen = append(seen, string(b))

	for _, s := range seen {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("the header value leaked into %q", s)
		}
	}
	m.Close()
	if strings.Contains(logs.String(), "s3cr3t") {
		t.Errorf("the header value leaked into the logs:\n%s", logs.String())
	}
	st.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) == 0 {
		t.Fatal("no store files")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("s3cr3t")) {
			t.Errorf("the header value is stored in %s", f)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
