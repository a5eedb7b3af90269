package legate_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
)

// secret holds the characters that encoders escape: / + = & < > " \ % and
// a space, and a non-ASCII letter.
const secret = `tok/en+A=B&C<D>"E\F%G H-é_9`

// marshal is Go's JSON string of s, without the quotes.
func marshal(s string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	enc.Encode(s)
	q := strings.TrimSpace(b.String())
	return q[1 : len(q)-1]
}

// Every form of a secret that a provider may echo is masked, inside the
// text around it.
func TestMaskForms(t *testing.T) {
	b64 := func(e *base64.Encoding, prefix, s, suffix string) string {
		return e.EncodeToString([]byte(prefix + s + suffix))
	}
	tests := map[string]string{
		"plain":                    secret,
		"json (Go)":                marshal(secret, true),
		"json without html escape": marshal(secret, false),
		"json with \\/":            strings.ReplaceAll(marshal(secret, true), "/", `\/`),
		"json, php style":          `tok\/en+A=B&C<D>\"E\\F%G H-\u00e9_9`,
		"json, every \\u escape":   `tok\u002fen\u002bA\u003dB\u0026C\u003cD\u003e\u0022E\u005cF\u0025G\u0020H\u002d\u00e9\u005f9`,
		"json, upper-case \\u":     `tok\u002Fen\u002BA\u003DB\u0026C\u003CD\u003E\u0022E\u005CF\u0025G\u0020H\u002D\u00E9\u005F9`,
		"json in a json string":    marshal(marshal(secret, true), true),
		"\\/ in a json string":     marshal(strings.ReplaceAll(marshal(secret, false), "/", `\/`), false),
		"\\u in a json string":     marshal(`tok\u002fen\u002bA\u003dB\u0026C\u003cD\u003e\u0022E\u005cF\u0025G\u0020H\u002d\u00e9\u005f9`, true),
		"query escaped":            url.QueryEscape(secret),
		"path escaped":             url.PathEscape(secret),
		"every byte escaped":       "tok%2Fen%2BA%3DB%26C%3CD%3E%22E%5CF%25G%20H-%C3%A9_9",
		"lower-case escapes":       "tok%2fen%2bA%3dB%26C%3cD%3e%22E%5cF%25G+H-%c3%a9_9",
		"hex":                      hex.EncodeToString([]byte(secret)),
		"base64 alone":             b64(base64.StdEncoding, "", secret, ""),
		"base64 alone, unpadded":   b64(base64.RawStdEncoding, "", secret, ""),
		"base64url alone":          b64(base64.URLEncoding, "", secret, ""),
		"base64 at offset 0":       b64(base64.StdEncoding, "", secret, "tail"),
		"base64 at offset 1":       b64(base64.StdEncoding, "x", secret, "!"),
		"base64 at offset 2":       b64(base64.RawStdEncoding, "xy", secret, "!?"),
		"base64url at offset 1":    b64(base64.URLEncoding, "Bearer ", secret, "??>>"),
		"base64url at offset 2":    b64(base64.RawURLEncoding, "Be", secret, ""),
	}
	for name, form := range tests {
		t.Run(name, func(t *testing.T) {
			in := `{"echo":"` + form + `","n":1}`
			got := string(legate.Mask([]byte(in), false, secret))
			if strings.Contains(got, form[min(len(form)/3, 8):len(form)-min(len(form)/3, 8)]) {
				t.Errorf("Mask(%q) = %q: the form is still there", in, got)
			}
			if !strings.Contains(got, legate.Redacted) || !strings.HasPrefix(got, `{"echo":"`) || !strings.HasSuffix(got, `","n":1}`) {
				t.Errorf("Mask(%q) = %q, want the form replaced and the rest kept", in, got)
			}
		})
	}
}

// The parts of a credential header value that are secret alone are
// masked wherever they appear.
func TestCredentialParts(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("sk_live_user:hunter22"))
	tests := map[string]struct {
		value string
		text  string // where a part of it appears
		want  string
	}{
		"token after Bearer":             {"Bearer abc/def", "invalid token: abc/def", "invalid token: [redacted]"},
		"token, JSON-escaped":            {"Bearer abc/def", `{"error":"abc\/def"}`, `{"error":"[redacted]"}`},
		"token after a scheme":           {"Token 0123456789", "bad 0123456789.", "bad [redacted]."},
		"basic's base64":                 {"Basic " + basic, "got " + basic, "got [redacted]"},
		"basic's user:password":          {"Basic " + basic, "login sk_live_user:hunter22 failed", "login [redacted] failed"},
		"basic's password":               {"Basic " + basic, "password hunter22 is wrong", "password [redacted] is wrong"},
		"basic's user (API key)":         {"Basic " + basic, "key sk_live_user unknown", "key [redacted] unknown"},
		"a plain value":                  {"0123456789", "key 0123456789", "key [redacted]"},
		"a value with spaces, no scheme": {"not a/scheme value", "x not a/scheme value", "x [redacted]"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := legate.NewSecrets(legate.CredentialParts(tc.value)...)
			if got := s.MaskString(tc.text); got != tc.want {
				t.Errorf("masking %q of %q: %q, want %q", tc.text, tc.value, got, tc.want)
			}
		})
	}
}

func TestMaskTruncated(t *testing.T) {
	tests := map[string]struct {
		in   string
		want string
	}{
		"plain cut":         {"token: tok/en+A=B&", "token: [redacted]"},
		"json-escaped cut":  {`token: tok\/en+A=B\u0026C`, "token: [redacted]"},
		"too short to tell": {"token: tok", "token: tok"},
		"whole, then a cut": {secret + " and " + secret[:10], "[redacted] and [redacted]"},
		"nothing of it":     {"nothing here", "nothing here"},
	}
	s := legate.NewSecrets(secret)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := string(s.Mask([]byte(tc.in), true)); got != tc.want {
				t.Errorf("Mask(%q, truncated) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSecretsNilAndShort(t *testing.T) {
	var none *legate.Secrets
	if got := string(none.Mask([]byte("abc"), true)); got != "abc" || none.Contains([]byte("abc")) || !none.Empty() {
		t.Errorf("a nil set masked %q", got)
	}
	if s := legate.NewSecrets("abc", ""); !s.Empty() {
		t.Error("values shorter than 4 bytes were kept")
	}
	s := legate.NewSecrets("abcd")
	if !s.Contains([]byte("xxabcdxx")) || s.Contains([]byte("abc d")) {
		t.Error("Contains is wrong")
	}
}

// Partial holds back what may be the start of a secret at the end of a
// chunk of a stream, and nothing else.
func TestSecretsPartial(t *testing.T) {
	s := legate.NewSecrets("s3cr3t/Value")
	tests := map[string]struct {
		in   string
		want int
	}{
		"no start":            {"data: {}\n\n", 0},
		"one byte":            {"token s", 1},
		"most of it":          {"token s3cr3t/Val", 10},
		"json-escaped start":  {`token s3cr3t\/Va`, 10},
		"whole (not a start)": {"x s3cr3t/Value", 0},
		"empty":               {"", 0},
		"base64 start":        {"x " + base64.StdEncoding.EncodeToString([]byte("s3cr3t/Value"))[:6], 6},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := s.Partial([]byte(tc.in)); got != tc.want {
				t.Errorf("Partial(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

// BenchmarkMask is the cost a relayed result pays per read: a 2 KiB
// event-stream chunk without a secret, masked and checked for a held-back
// start, against an upstream's "Bearer <token>" credential.
func BenchmarkMask(b *testing.B) {
	s := legate.NewSecrets(legate.CredentialParts("Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a")...)
	chunk := []byte("event: message\ndata: " + `{"jsonrpc":"2.0","id":"legate-1","result":{"content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum dolor sit amet ", 72) + `"}]}}` + "\n\n")
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		s.Mask(chunk, false)
		s.Partial(chunk)
	}
}

// BenchmarkMaskGatewaySet is the cost every native result pays: a 3 KiB
// JSON result without a secret, masked with the gateway's set of many
// secrets (the configuration's, and people's tokens seen at call time).
func BenchmarkMaskGatewaySet(b *testing.B) {
	result := []byte(strings.Repeat(`{"number":1,"title":"Checkout fails on empty cart","user":{"login":"octocat","id":1,"node_id":"MDQ6VXNlcjE=","avatar_url":"https://github.com/images/error/octocat_happy.gif"},"labels":[{"name":"bug"}],"state":"open"},`, 14))
	for _, n := range []int{1, 8, 64} {
		var values []string
		for i := range n {
			values = append(values, fmt.Sprintf("ghp_16C7e42F292c6912E7710c838347Ae17%04d", i))
		}
		s := legate.NewSecrets(values...)
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(result)))
			for b.Loop() {
				s.Mask(result, false)
			}
		})
	}
}

// BenchmarkNewSecrets is the cost of deriving the forms of a call's
// credential, paid once per call (connectors) or per upstream.
func BenchmarkNewSecrets(b *testing.B) {
	for b.Loop() {
		legate.NewSecrets(legate.CredentialParts("Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a")...)
	}
}
