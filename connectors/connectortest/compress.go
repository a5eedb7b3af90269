package connectortest

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
)

// Gzip, Zlib and Flate compress b as a server answering with
// Content-Encoding gzip, deflate (zlib, as RFC 9110 means it) or deflate
// sent raw (as some servers do) would: for stand-ins whose answers a
// connector must decode before masking.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// Zlib is b as a zlib stream (Content-Encoding: deflate).
func Zlib(b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// Flate is b as a raw deflate stream.
func Flate(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.DefaultCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}
