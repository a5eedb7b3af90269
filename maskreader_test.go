package legate_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/legate-mcp/legate"
)

// A stream masked as it is read, however it is cut into reads, gives what
// masking it whole gives: a secret split between two reads is still
// masked.
func TestMaskReaderChunks(t *testing.T) {
	secrets := legate.NewSecrets(legate.CredentialParts("Bearer s3cr3t/Value+7f1c9a")...)
	stream := "event: message\ndata: {\"text\":\"got s3cr3t/Value+7f1c9a and s3cr3t\\/Value+7f1c9a\"}\n\n" +
		"event: message\ndata: {\"text\":\"" + strings.Repeat("x", 5000) + " s3cr3t/Value+7f1c9a\"}\n\nend s3cr3t/Val"
	want := string(secrets.Mask([]byte(stream), false))
	readers := map[string]func(io.Reader) io.Reader{
		"whole":      func(r io.Reader) io.Reader { return r },
		"one byte":   iotest.OneByteReader,
		"half":       iotest.HalfReader,
		"data error": iotest.DataErrReader,
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			m := secrets.Reader(io.NopCloser(wrap(strings.NewReader(stream))))
			got, err := io.ReadAll(iotest.OneByteReader(m))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want || bytes.Contains(got, []byte("7f1c9a")) {
				t.Errorf("got %q\nwant %q", got, want)
			}
		})
	}
}

// What ends an event is never held back: a client waiting on the stream
// gets each event whole as soon as it is sent.
func TestMaskReaderHoldsOnlyAStart(t *testing.T) {
	secrets := legate.NewSecrets("s3cr3t/Value+7f1c9a")
	pr, pw := io.Pipe()
	m := secrets.Reader(pr)
	go pw.Write([]byte("data: {\"a\":1}\n\n"))
	buf := make([]byte, 64)
	n, err := m.Read(buf)
	if err != nil || string(buf[:n]) != "data: {\"a\":1}\n\n" {
		t.Fatalf("read %q, %v: want the whole event at once", buf[:n], err)
	}
	go pw.Write([]byte("data: s3cr3t/Va"))
	if n, _ = m.Read(buf); string(buf[:n]) != "data: " {
		t.Fatalf("read %q: want what precedes the start of the secret", buf[:n])
	}
	go func() { pw.Write([]byte("lue+7f1c9a\n\n")); pw.Close() }()
	rest, _ := io.ReadAll(m)
	if string(rest) != "[redacted]\n\n" {
		t.Errorf("rest %q", rest)
	}
}
