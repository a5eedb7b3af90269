package wire_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/legate-mcp/legate/agent/internal/wire"
)

func serve(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestStreamEvents: comments are skipped, data lines of one event are
// joined, an event with no data is not one, and a last event without its
// blank line still counts.
func TestStreamEvents(t *testing.T) {
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Key") != "k" {
			t.Errorf("request headers %v", r.Header)
		}
		b, _ := io.ReadAll(r.Body)
		if string(b) != `{"a":1}` {
			t.Errorf("body %s", b)
		}
		io.WriteString(w, ": a comment\n\nevent: one\ndata: {\"x\":\ndata: 1}\n\nevent: empty\n\ndata:[DONE]")
	})
	s, err := wire.Post(context.Background(), http.DefaultClient, url, http.Header{"X-Key": {"k"}}, map[string]int{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []string
	for s.Next() {
		got = append(got, string(s.Data()))
	}
	if s.Err() != nil || len(got) != 2 || got[0] != "{\"x\":\n1}" || got[1] != "[DONE]" {
		t.Fatalf("events %q, err %v", got, s.Err())
	}
}

// TestAPIError: an answer other than 2xx is an *APIError with its status,
// the provider's message and the response (for Retry-After).
func TestAPIError(t *testing.T) {
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
	})
	_, err := wire.Post(context.Background(), http.DefaultClient, url, nil, struct{}{})
	var ae *wire.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 429 || ae.Message != "slow down" || ae.Response.Header.Get("Retry-After") != "3" {
		t.Fatalf("error %#v", err)
	}
}
