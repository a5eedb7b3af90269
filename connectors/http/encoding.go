package httpconn

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"

	"github.com/legate-mcp/legate"
)

// Content codings are the transport's business: a caller may not set
// Accept-Encoding (netguard reserves it), the transport asks for gzip and
// decodes it, and execute decodes gzip or deflate that a server sends
// unasked, then masks the decoded body. A coding it cannot decode (br,
// zstd) withholds the body: it cannot be checked for credentials.

// compressedSecret reports whether body, about to be returned as binary,
// is gzip or zlib data (a file, not a content coding) whose content, up to
// a few levels deep, holds a secret. Decompression stops at 8 times limit.
func compressedSecret(body []byte, limit int, secrets *legate.Secrets) bool {
	for range 3 {
		if secrets.Empty() || len(body) < 2 {
			return false
		}
		var r io.Reader
		var err error
		switch {
		case body[0] == 0x1f && body[1] == 0x8b:
			r, err = gzip.NewReader(bytes.NewReader(body))
		case body[0]&0x0f == 8 && (uint16(body[0])<<8|uint16(body[1]))%31 == 0:
			r, err = zlib.NewReader(bytes.NewReader(body))
		default:
			return false
		}
		if err != nil {
			return false
		}
		body, _ = io.ReadAll(io.LimitReader(r, 8*int64(limit)))
		if secrets.Contains(body) {
			return true
		}
	}
	return false
}
