// Package contentcoding undoes the content codings of an HTTP response's
// body, so that what reads it (the masking of credentials, above all) sees
// the bytes the server meant and not their compression. It imports only
// the standard library, so that the connectors and the upstreams can both
// use it without depending on each other.
package contentcoding

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ErrContentEncoding is returned by DecodeBody for a content coding it
// cannot undo (br, zstd, compress): such a body cannot be checked for
// secrets, so the caller must withhold it.
var ErrContentEncoding = errors.New("unsupported content encoding")

// DecodeBody undoes the content codings of resp's body (gzip, deflate,
// identity), as Go's transport does only when it asked for them itself.
// Masking sees a body only once it is decoded: a secret echoed in a
// compressed body would otherwise pass unseen. On success resp's body is
// the decoded one and its Content-Encoding and Content-Length headers are
// removed; the caller bounds how much it reads, which bounds a
// decompression bomb too.
func DecodeBody(resp *http.Response) error {
	codings := contentCodings(resp.Header)
	if len(codings) == 0 {
		return nil
	}
	body := resp.Body
	for i := len(codings) - 1; i >= 0; i-- { // applied in order, undone in reverse
		var err error
		if body, err = decoder(codings[i], body); err != nil {
			return fmt.Errorf("content encoding %q: %w", codings[i], err)
		}
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{body, resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
	return nil
}

// contentCodings lists the codings of a Content-Encoding header, identity
// left out.
func contentCodings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	return out
}

func decoder(coding string, r io.ReadCloser) (io.ReadCloser, error) {
	switch coding {
	case "gzip", "x-gzip":
		return gzip.NewReader(r)
	case "deflate":
		// RFC 9110's deflate is zlib-wrapped; some servers send it raw.
		br := bufio.NewReader(r)
		if head, err := br.Peek(2); err == nil && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 && head[0]&0x0f == 8 {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	}
	return nil, ErrContentEncoding
}
