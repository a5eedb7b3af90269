package main

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// canary is a secret value planted by a test, and the forms in which a
// leak of it would show: whole, its random part, a piece or a prefix of it
// (cut by truncation), and encoded (hex, base64 at every alignment).
type canary struct {
	label, value string
	needles      []needle
}

type needle struct {
	form string
	b    []byte
}

// pieceLen is the shortest run of a canary's random hex digits counted as
// a leak: 48 bits, which do not turn up by chance in megabytes of hashes,
// ids and ciphertext.
const pieceLen = 12

func newCanary(t testing.TB, label string) canary {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	random := hex.EncodeToString(b)
	prefix := "CANARY-" + label + "-"
	// The "/" and "+" make its JSON-escaped and URL-encoded forms differ
	// from it; its random part stays whole in them, for the scan to find.
	c := canary{label: label, value: prefix + random + "/k+q"}
	add := func(form, s string) { c.needles = append(c.needles, needle{form, []byte(s)}) }
	add("in the clear", c.value)
	add("its random part", random)
	for k := pieceLen - 1; k >= 4; k-- { // the longest first, to report what leaked
		add(fmt.Sprintf("a prefix cut after %d random characters", k), prefix+random[:k])
	}
	for i := 0; i+pieceLen <= len(random); i++ {
		add(fmt.Sprintf("random characters %d-%d", i, i+pieceLen), random[i:i+pieceLen])
	}
	add("hex-encoded", hex.EncodeToString([]byte(c.value)))
	add("hex-encoded (upper case)", strings.ToUpper(hex.EncodeToString([]byte(c.value))))
	for _, enc := range []struct {
		name string
		e    *base64.Encoding
	}{{"base64", base64.StdEncoding}, {"base64url", base64.URLEncoding}} {
		// Inside a longer encoded string the canary's characters depend on
		// its offset modulo 3; drop the groups it shares with its neighbours.
		for off := range 3 {
			s := enc.e.EncodeToString(append(make([]byte, off), c.value...))
			start := 0
			if off > 0 {
				start = 4
			}
			add(fmt.Sprintf("%s-encoded (offset %d)", enc.name, off), s[start:len(s)-4])
		}
	}
	return c
}

// hit is where a canary was found.
type hit struct {
	canary, form, where string
	offset              int
	context             string
}

func (h hit) String() string {
	return fmt.Sprintf("canary %s (%s) in %s at byte %d: …%s…", h.canary, h.form, h.where, h.offset, h.context)
}

// find returns the first form of c in data.
func (c canary) find(where string, data []byte) (hit, bool) {
	for _, n := range c.needles {
		if i := bytes.Index(data, n.b); i >= 0 {
			lo, hi := max(0, i-80), min(len(data), i+len(n.b)+80)
			return hit{canary: c.label, form: n.form, where: where, offset: i, context: fmt.Sprintf("%q", data[lo:hi])}, true
		}
	}
	return hit{}, false
}

// evidence is everything Legate said or stored during a test, each piece
// named by where it came from. Pieces may grow while the test runs (a
// response stream, a log).
type evidence struct {
	mu    sync.Mutex
	items []*piece
}

type piece struct {
	where string
	mu    sync.Mutex
	buf   bytes.Buffer
}

func (p *piece) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

func (p *piece) Bytes() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.buf.Bytes())
}

func (e *evidence) open(where string) *piece {
	p := &piece{where: where}
	e.mu.Lock()
	e.items = append(e.items, p)
	e.mu.Unlock()
	return p
}

func (e *evidence) add(where string, data []byte) { e.open(where).Write(data) }

// addJSON keeps v as JSON, and err's text.
func (e *evidence) addJSON(where string, v any, err error) {
	b, mErr := json.Marshal(v)
	if mErr != nil {
		b = fmt.Appendf(nil, "%#v", v)
	}
	if err != nil {
		b = fmt.Appendf(b, "\nerror: %v", err)
	}
	e.add(where, b)
}

// addDir keeps every file under dir as it is now.
func (e *evidence) addDir(t *testing.T, dir, phase string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return nil // a -wal or -shm file removed meanwhile
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		e.add(fmt.Sprintf("state file %s (%s)", rel, phase), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scan looks for every canary in every piece; it returns the hits and how
// many pieces and bytes it read.
func (e *evidence) scan(cs ...canary) (hits []hit, pieces, n int) {
	e.mu.Lock()
	items := slices.Clone(e.items)
	e.mu.Unlock()
	for _, p := range items {
		h, size := p.scan(cs...)
		hits, n = append(hits, h...), n+size
	}
	return hits, len(items), n
}

// scan looks for every canary in the piece, and in whatever compressed
// data it carries in base64 (a body_base64 of gzip bytes).
func (p *piece) scan(cs ...canary) (hits []hit, n int) {
	b := p.Bytes()
	views := append([][]byte{b}, decompressed(b)...)
	for i, v := range views {
		where := p.where
		if i > 0 {
			where += " (decompressed from base64)"
		}
		for _, c := range cs {
			if h, ok := c.find(where, v); ok {
				hits = append(hits, h)
			}
		}
	}
	return hits, len(b)
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/]{16,}={0,2}`)

// decompressed returns the content of every base64 run in b that decodes
// to gzip or zlib data, unwrapped up to three levels.
func decompressed(b []byte) [][]byte {
	var out [][]byte
	for _, run := range base64Run.FindAll(b, -1) {
		data, err := base64.StdEncoding.DecodeString(string(run))
		if err != nil {
			continue
		}
		for range 3 {
			var r io.Reader
			switch {
			case len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b:
				r, err = gzip.NewReader(bytes.NewReader(data))
			case len(data) > 2 && data[0]&0x0f == 8 && (uint16(data[0])<<8|uint16(data[1]))%31 == 0:
				r, err = zlib.NewReader(bytes.NewReader(data))
			default:
				err = io.EOF
			}
			if err != nil {
				break
			}
			data, _ = io.ReadAll(io.LimitReader(r, 1<<20))
			out = append(out, data)
		}
	}
	return out
}

// channels names the leak channels, from the start of a piece's name; the
// first that matches names it.
var channels = []struct{ prefix, channel string }{
	{"session: ", "MCP results and errors (HTTP session)"},
	{"stateless: ", "MCP results and errors (HTTP stateless)"},
	{"stdio: ", "MCP results and errors (stdio)"},
	{"serve: ", "MCP results and errors (legate serve)"},
	{"MCP tools/list (stateless)", "MCP results and errors (HTTP stateless)"},
	{"MCP ", "MCP results and errors (HTTP session)"},
	{"`legate serve` tools/list", "MCP results and errors (legate serve)"},
	{"Legate's HTTP response to GET /metrics", "metrics"},
	{"`legate serve` HTTP response to GET /metrics", "metrics"},
	{"Legate's HTTP response to GET /admin/v1/approvals", "stored approval outcomes"},
	{"output of `legate approvals", "stored approval outcomes"},
	{"output of `legate audit", "audit rows"},
	{"Legate's HTTP response", "HTTP responses"},
	{"`legate serve` HTTP response", "HTTP responses"},
	{"the server's logs", "log lines"},
	{"the CLI's and `legate serve`'s logs", "log lines"},
	{"the stdio server's", "log lines"},
	{"state file", "stored bytes"},
	{"output of `legate", "CLI output"},
	{"notifications", "MCP notifications"},
}

// channel names the leak channel of a piece.
func (p *piece) channel() string {
	for _, c := range channels {
		if strings.HasPrefix(p.where, c.prefix) {
			return c.channel
		}
	}
	return "other"
}

// scanByChannel runs one subtest per leak channel, each failing on a
// canary found in its pieces, and returns how many pieces and bytes it read.
func (e *evidence) scanByChannel(t *testing.T, cs ...canary) (pieces, n int) {
	e.mu.Lock()
	items := slices.Clone(e.items)
	e.mu.Unlock()
	byChannel := map[string][]*piece{}
	for _, p := range items {
		byChannel[p.channel()] = append(byChannel[p.channel()], p)
	}
	for _, ch := range slices.Sorted(maps.Keys(byChannel)) {
		t.Run(ch, func(t *testing.T) {
			for _, p := range byChannel[ch] {
				hits, size := p.scan(cs...)
				n += size
				for _, h := range hits {
					t.Errorf("LEAK: %s", h)
				}
			}
			t.Logf("%d pieces", len(byChannel[ch]))
		})
	}
	return len(items), n
}

// dump writes every piece to a file in dir, for a person to read; an
// empty dir writes nothing.
func (e *evidence) dump(t *testing.T, dir string) {
	if dir == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, p := range e.items {
		name := fmt.Sprintf("%03d-%s", i, regexp.MustCompile(`[^A-Za-z0-9.-]+`).ReplaceAllString(p.where, "_"))
		if err := os.WriteFile(filepath.Join(dir, name[:min(len(name), 120)]), p.Bytes(), 0o600); err != nil {
			t.Error(err)
		}
	}
}

// record keeps every response of h: status, headers and body.
func (e *evidence) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := e.open(fmt.Sprintf("Legate's HTTP response to %s %s", r.Method, r.URL.RequestURI()))
		rw := &recordingWriter{ResponseWriter: w, p: p}
		h.ServeHTTP(rw, r)
		rw.head(0) // headers set after the body, trailers included
	})
}

type recordingWriter struct {
	http.ResponseWriter
	p     *piece
	wrote bool
}

func (w *recordingWriter) head(status int) {
	var b bytes.Buffer
	if status != 0 {
		fmt.Fprintf(&b, "HTTP %d\n", status)
	}
	w.Header().Write(&b)
	b.WriteString("\n")
	w.p.Write(b.Bytes())
}

func (w *recordingWriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		w.head(status)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		w.head(http.StatusOK)
	}
	w.p.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *recordingWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// recordingTransport keeps every response a client receives.
type recordingTransport struct {
	ev   *evidence
	base http.RoundTripper
}

func (t recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	p := t.ev.open(fmt.Sprintf("`legate serve` HTTP response to %s %s", r.Method, r.URL.RequestURI()))
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP %d\n", resp.StatusCode)
	resp.Header.Write(&b)
	b.WriteString("\n")
	p.Write(b.Bytes())
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, p), resp.Body}
	return resp, nil
}

// The scan finds a canary in every form it claims to, and nothing in text
// that only looks like one.
func TestCanaryScanFindsPlantedLeaks(t *testing.T) {
	c := newCanary(t, "SELF")
	random := strings.TrimSuffix(c.value[len("CANARY-SELF-"):], "/k+q")
	planted := map[string]string{
		"plain":            "Authorization: Bearer " + c.value,
		"json":             `{"headers":{"Authorization":["Bearer ` + c.value + `"]}}`,
		"cut at a limit":   "… token " + c.value[:len("CANARY-SELF-")+5],
		"tail only":        "…" + random[len(random)-pieceLen:],
		"middle piece":     "x" + random[7:7+pieceLen] + "y",
		"hex":              hex.EncodeToString([]byte("Bearer " + c.value)),
		"base64 offset 0":  base64.StdEncoding.EncodeToString([]byte(c.value + "tail")),
		"base64 offset 1":  base64.StdEncoding.EncodeToString([]byte("B" + c.value)),
		"base64 offset 2":  base64.RawStdEncoding.EncodeToString([]byte("Be" + c.value + "!")),
		"base64url in url": "?t=" + base64.URLEncoding.EncodeToString([]byte("Bearer "+c.value+"??>>")),
	}
	for name, s := range planted {
		if _, ok := c.find(name, []byte(s)); !ok {
			t.Errorf("%s: not found in %q", name, s)
		}
	}
	ev := &evidence{}
	ev.add("clean", []byte(`{"body":"Authorization: Bearer [redacted]","note":"CANARY-SELF-","x":"`+random[:pieceLen-1]+`"}`))
	ev.add("dirty", []byte("zzz"+c.value+"zzz"))
	hits, pieces, _ := ev.scan(c)
	if pieces != 2 || len(hits) != 1 || hits[0].where != "dirty" {
		t.Fatalf("hits %v", hits)
	}

	// Compressed, then base64-encoded in a result: found once decompressed.
	for name, data := range map[string][]byte{
		"gzip": connectortest.Gzip([]byte(`{"auth":"Bearer ` + c.value + `"}`)),
		"zlib": connectortest.Zlib([]byte("token=" + c.value)),
	} {
		ev := &evidence{}
		ev.add(name, []byte(`{"status":200,"body_base64":"`+base64.StdEncoding.EncodeToString(data)+`"}`))
		if hits, _, _ := ev.scan(c); len(hits) != 1 {
			t.Errorf("%s in body_base64: hits %v", name, hits)
		}
	}
}
