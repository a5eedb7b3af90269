package httpkit_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/httpkit"
)

func TestSnippet(t *testing.T) {
	const secret = "tok-7f1c9a2b"
	gz := func(s string) string { return string(connectortest.Gzip([]byte(s))) }
	long := strings.Repeat("é", 300) // 600 bytes
	tests := map[string]struct {
		contentType, encoding, body string
		want                        string
	}{
		"one line":             {"application/json", "", "{\"error\":\n  \"bad  thing\"}", `{"error": "bad thing"}`},
		"masked":               {"text/plain", "", "bad token " + secret, "bad token " + legate.Redacted},
		"gzip decoded, masked": {"text/plain", "gzip", gz("refused " + secret), "refused " + legate.Redacted},
		"unknown coding":       {"text/plain", "br", "refused " + secret, ""},
		"binary type":          {"image/png", "", "text after all", ""},
		"no type, text":        {"", "", "plain words", "plain words"},
		"no type, binary":      {"", "", "\x00\x01\x02", ""},
		"invalid utf-8":        {"text/plain", "", "caf\xe9", ""},
		"cut, rune kept whole": {"text/plain", "", long, strings.Repeat("é", 256) + " …"},
		"secret at the cut":    {"text/plain", "", strings.Repeat("x", 508) + secret, strings.Repeat("x", 508) + legate.Redacted[:4] + " …"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body))}
			if tc.contentType != "" {
				resp.Header.Set("Content-Type", tc.contentType)
			}
			if tc.encoding != "" {
				resp.Header.Set("Content-Encoding", tc.encoding)
			}
			got := httpkit.Snippet(resp, legate.NewSecrets(secret))
			if strings.Contains(got, "7f1c") {
				t.Fatalf("snippet holds the secret: %q", got)
			}
			if got != tc.want {
				t.Errorf("snippet %q; want %q", got, tc.want)
			}
		})
	}
}

// Drain reads what is left, so the connection can be reused, and closes.
func TestDrain(t *testing.T) {
	body := &closeRecorder{Reader: strings.NewReader(strings.Repeat("x", 1000))}
	httpkit.Drain(&http.Response{Body: body})
	if !body.closed || body.Reader.(*strings.Reader).Len() != 0 {
		t.Errorf("closed %v, %d bytes left", body.closed, body.Reader.(*strings.Reader).Len())
	}
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }
