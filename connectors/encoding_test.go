package connectors_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

func TestDecodeBody(t *testing.T) {
	plain := []byte(`{"token":"s3cr3t"}`)
	tests := map[string]struct {
		encoding string
		body     []byte
		err      error
	}{
		"none":              {"", plain, nil},
		"identity":          {"identity", plain, nil},
		"gzip":              {"gzip", connectortest.Gzip(plain), nil},
		"x-gzip, any case":  {"X-GZIP", connectortest.Gzip(plain), nil},
		"deflate (zlib)":    {"deflate", connectortest.Zlib(plain), nil},
		"deflate (raw)":     {"deflate", connectortest.Flate(plain), nil},
		"deflate then gzip": {"deflate, gzip", connectortest.Gzip(connectortest.Zlib(plain)), nil},
		"brotli":            {"br", []byte{1, 2, 3}, connectors.ErrContentEncoding},
		"zstd after gzip":   {"gzip, zstd", []byte{1, 2, 3}, connectors.ErrContentEncoding},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(tc.body)), ContentLength: int64(len(tc.body))}
			if tc.encoding != "" {
				resp.Header.Set("Content-Encoding", tc.encoding)
			}
			err := connectors.DecodeBody(resp)
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
