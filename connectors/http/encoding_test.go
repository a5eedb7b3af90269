package httpconn_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

// The credential of these tests: with a / and a +, which encoders escape.
const echoToken = "tok/en+7f1c9a-secret"

// leaked reports whether the credential, in any form the tests send it,
// is in the result: in the clear or in the body_base64, decompressed if it
// is compressed data.
func leaked(r any) bool {
	b, _ := json.Marshal(r)
	if bytes.Contains(b, []byte("7f1c9a")) {
		return true
	}
	var resp struct {
		BodyBase64 string `json:"body_base64"`
	}
	json.Unmarshal(b, &resp)
	raw, _ := base64.StdEncoding.DecodeString(resp.BodyBase64)
	for range 3 {
		if bytes.Contains(raw, []byte("7f1c9a")) {
			return true
		}
		if zr, err := gzip.NewReader(bytes.NewReader(raw)); err == nil {
			raw, _ = io.ReadAll(zr)
		} else if zr, err := zlib.NewReader(bytes.NewReader(raw)); err == nil {
			raw, _ = io.ReadAll(zr)
		} else {
			raw, _ = io.ReadAll(flate.NewReader(bytes.NewReader(raw)))
		}
	}
	return bytes.Contains(raw, []byte("7f1c9a"))
}

// A server that echoes the credential compressed, asked to or not: the
// connector decodes what it can and masks the result; what it cannot
// decode it withholds; a caller may not choose the encoding.
func TestCallCompressedEcho(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		echo := []byte(`{"auth":"` + r.Header.Get("Authorization") + `"}`)
		status := http.StatusOK
		if strings.HasPrefix(r.URL.Path, "/e401") {
			status = http.StatusUnauthorized
		}
		w.Header().Set("Content-Type", "application/json")
		switch strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/e401"), "/") {
		case "asked":
			if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				w.Header().Set("Content-Encoding", "gzip")
				echo = connectortest.Gzip(echo)
			}
		case "deflate":
			w.Header().Set("Content-Encoding", "deflate")
			echo = connectortest.Zlib(echo)
		case "raw-deflate":
			w.Header().Set("Content-Encoding", "deflate")
			echo = connectortest.Flate(echo)
		case "gzip-twice":
			w.Header().Set("Content-Encoding", "gzip, gzip")
			echo = connectortest.Gzip(connectortest.Gzip(echo))
		case "br":
			w.Header().Set("Content-Encoding", "br")
			echo = connectortest.Flate(echo) // not brotli: the connector must not try it
		case "gzip-file":
			w.Header().Set("Content-Type", "application/gzip")
			echo = connectortest.Gzip(echo)
		}
		w.WriteHeader(status)
		w.Write(echo)
	})
	c := build(t, rec.srv.URL)
	creds := map[string]string{"token": echoToken}
	tests := map[string]struct {
		args string
		code legate.Code // "" for a result
	}{
		"gzip asked for by the caller": {`{"path":"asked","headers":{"Accept-Encoding":"gzip"}}`, legate.CodeInvalidArgument},
		"gzip asked for by Legate":     {`{"path":"asked"}`, ""},
		"deflate (zlib), unasked":      {`{"path":"deflate"}`, ""},
		"deflate (raw), unasked":       {`{"path":"raw-deflate"}`, ""},
		"gzip twice":                   {`{"path":"gzip-twice"}`, ""},
		"an encoding it cannot decode": {`{"path":"br"}`, legate.CodeAdapterMapping},
		"a gzip file holding it":       {`{"path":"gzip-file"}`, legate.CodeAdapterMapping},
		"error body, deflate":          {`{"path":"e401/deflate"}`, legate.CodeAuthExpired},
		"error body, gzip twice":       {`{"path":"e401/gzip-twice"}`, legate.CodeAuthExpired},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := callTool(t, c, tc.args, creds)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if leaked(resp) || !strings.Contains(resp.Body, legate.Redacted) {
					t.Errorf("result %+v, want the decoded body with the token masked", resp)
				}
				return
			}
			ce := wantCode(t, err, tc.code)
			if leaked(ce.Error()) {
				t.Errorf("error %v holds the token", ce)
			}
			if tc.code == legate.CodeAuthExpired && !strings.Contains(ce.Message, legate.Redacted) {
				t.Errorf("error %q: want the decoded excerpt, masked", ce.Message)
			}
		})
	}
}

// A server that echoes the credential escaped or encoded: every form is
// masked, in the body and in the headers, and so are the parts of a Basic
// credential.
func TestCallEchoedForms(t *testing.T) {
	forms := map[string]string{
		"json-escaped": strings.ReplaceAll(echoToken, "/", `\/`),
		"u-escaped":    `tok\u002fen\u002b7f1c9a\u002dsecret`,
		"query":        url.QueryEscape(echoToken),
		"path":         url.PathEscape(echoToken),
		"base64":       base64.StdEncoding.EncodeToString([]byte("x:" + echoToken)),
		"base64url":    base64.RawURLEncoding.EncodeToString([]byte("tok=" + echoToken)),
	}
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		form := forms[strings.TrimPrefix(r.URL.Path, "/")]
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", form)
		io.WriteString(w, `{"echo":"`+form+`"}`)
	})
	c := build(t, rec.srv.URL)
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			resp, err := callTool(t, c, `{"path":"`+name+`"}`, map[string]string{"token": echoToken})
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(resp)
			if bytes.Contains(out, []byte(form[4:len(form)-4])) || !strings.Contains(resp.Body, legate.Redacted) {
				t.Errorf("result %s, want the form %q masked", out, form)
			}
		})
	}
	t.Run("basic parts", func(t *testing.T) {
		basic := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			user, pass, _ := r.BasicAuth()
			io.WriteString(w, "unknown user "+user+" or password "+pass)
		})
		c := build(t, basic.srv.URL)
		resp, err := callTool(t, c, `{}`, map[string]string{"username": "sk_live_user", "password": "hunter22"})
		if err != nil {
			t.Fatal(err)
		}
		if want := "unknown user [redacted] or password [redacted]"; resp.Body != want {
			t.Errorf("body %q, want %q", resp.Body, want)
		}
	})
}
