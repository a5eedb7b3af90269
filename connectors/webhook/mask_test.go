package webhook_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

// A receiver that refuses a delivery and echoes the credentials in its
// answer, escaped, encoded or compressed: the error's excerpt holds none
// of them, and the excerpt is still there, decoded and masked.
func TestSendMasksEchoedCredentials(t *testing.T) {
	const token, signing = "hook/tok+7f1c9a", "sign/sec+8e2d0b"
	compress := func(s string) []byte { return connectortest.Zlib([]byte(s)) }
	tests := map[string]struct {
		encoding string
		body     []byte
	}{
		"json-escaped token": {"", []byte(`{"error":"bad token ` + strings.ReplaceAll(token, "/", `\/`) + `"}`)},
		"url-encoded secret": {"", []byte("secret=" + url.QueryEscape(signing) + "&x=1")},
		"deflate-compressed": {"deflate", compress("refused: Bearer " + token + " signed with " + signing)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rc := newReceiver(t, "", func(i int, w http.ResponseWriter) {
				if tc.encoding != "" {
					w.Header().Set("Content-Encoding", tc.encoding)
				}
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusUnauthorized)
				w.Write(tc.body)
			})
			c := build(t, rc.srv.URL, "max_attempts: 1")
			_, err := send(t, c, `{"payload":1}`, "op-mask", map[string]string{"token": token, "signing_secret": signing})
			ce := wantCode(t, err, legate.CodeAuthExpired)
			if strings.Contains(ce.Error(), "7f1c9a") || strings.Contains(ce.Error(), "8e2d0b") || !strings.Contains(ce.Message, legate.Redacted) {
				t.Errorf("error %q: want the excerpt with the credentials masked", ce.Message)
			}
		})
	}
}
