package contentcoding_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/internal/contentcoding"
)

// encode is b written through the writer newW makes.
func encode(b []byte, newW func(io.Writer) io.WriteCloser) []byte {
	var buf bytes.Buffer
	w := newW(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func gzipped(b []byte) []byte {
	return encode(b, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
}

func zlibbed(b []byte) []byte {
	return encode(b, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
}

func flated(b []byte) []byte {
	return encode(b, func(w io.Writer) io.WriteCloser { fw, _ := flate.NewWriter(w, flate.DefaultCompression); return fw })
}

func TestDecodeBody(t *testing.T) {
	plain := []byte(`{"token":"s3cr3t"}`)
	tests := map[string]struct {
		encoding string
		body     []byte
		err      error
	}{
		"none":              {"", plain, nil},
		"identity":          {"identity", plain, nil},
		"gzip":              {"gzip", gzipped(plain), nil},
		"x-gzip, any case":  {"X-GZIP", gzipped(plain), nil},
		"deflate (zlib)":    {"deflate", zlibbed(plain), nil},
		"deflate (raw)":     {"deflate", flated(plain), nil},
		"deflate then gzip": {"deflate, gzip", gzipped(zlibbed(plain)), nil},
		"brotli":            {"br", []byte{1, 2, 3}, contentcoding.ErrContentEncoding},
		"zstd after gzip":   {"gzip, zstd", []byte{1, 2, 3}, contentcoding.ErrContentEncoding},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(tc.body)), ContentLength: int64(len(tc.body))}
			if tc.encoding != "" {
				resp.Header.Set("Content-Encoding", tc.encoding)
			}
			err := contentcoding.DecodeBody(resp)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("body %q, %v", got, err)
			}
			if tc.encoding != "" && !strings.EqualFold(tc.encoding, "identity") && (resp.Header.Get("Content-Encoding") != "" || resp.ContentLength != -1) {
				t.Errorf("headers %v, length %d after decoding", resp.Header, resp.ContentLength)
			}
		})
	}
}
