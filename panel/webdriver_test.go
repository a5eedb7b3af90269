package panel_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The browser the tests drive: Debian's chromium through chromedriver's
// W3C WebDriver HTTP API, on 127.0.0.1.
const (
	chromiumBin     = "/usr/bin/chromium"
	chromedriverBin = "/usr/bin/chromedriver"
)

// browser is one WebDriver session.
type browser struct {
	t    *testing.T
	base string // the session's URL
}

// needBrowser starts chromedriver and a headless chromium, or skips the
// test when they are not installed (fails it under CI=true, where .ci/run
// installs them).
func needBrowser(t *testing.T) *browser {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	for _, bin := range []string{chromiumBin, chromedriverBin} {
		if _, err := os.Stat(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("browser test: %s is missing (CI=true: .ci/run installs chromium and chromium-driver)", bin)
			}
			t.Skipf("browser test: %s is missing: apt-get install chromium chromium-driver", bin)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(chromedriverBin, fmt.Sprintf("--port=%d", port), "--allowed-ips=127.0.0.1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	driver := fmt.Sprintf("http://127.0.0.1:%d", port)
	b := &browser{t: t}
	eventually(t, "chromedriver to start", func() bool {
		resp, err := http.Get(driver + "/status")
		if err != nil {
			return false
		}
		var st struct {
			Value struct{ Ready bool } `json:"value"`
		}
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		return st.Value.Ready
	})
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromiumBin, "args": []string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,1000",
			"--user-data-dir=" + t.TempDir()}},
	}}}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	b.base = driver
	b.do("POST", "/session", caps, &sess)
	if sess.SessionID == "" {
		t.Fatal("chromedriver made no session")
	}
	b.base = driver + "/session/" + sess.SessionID
	t.Cleanup(func() { b.try("DELETE", "", nil, nil) })
	return b
}

// try sends a WebDriver command and decodes its value into out, returning
// the WebDriver error, if any.
func (b *browser) try(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, b.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	raw, _ := io.ReadAll(resp.Body)
	json.Unmarshal(raw, &v)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil && len(v.Value) > 0 {
		return json.Unmarshal(v.Value, out)
	}
	return nil
}

func (b *browser) do(method, path string, body, out any) {
	b.t.Helper()
	if err := b.try(method, path, body, out); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) open(url string) {
	b.t.Helper()
	b.do("POST", "/url", map[string]string{"url": url}, nil)
}

// elementKey is the W3C key of an element reference.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// find returns the element css selects, or "" when there is none.
func (b *browser) find(css string) string {
	var el map[string]string
	if b.try("POST", "/element", map[string]string{"using": "css selector", "value": css}, &el) != nil {
		return ""
	}
	return el[elementKey]
}

// wait waits for css to select an element and returns it.
func (b *browser) wait(css string) string {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if el := b.find(css); el != "" {
			return el
		}
		if time.Now().After(deadline) {
			var src, url string
			b.try("GET", "/source", nil, &src)
			b.try("GET", "/url", nil, &url)
			b.t.Fatalf("gave up waiting for the page to show %s; at %s:\n%s", css, url, src)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *browser) click(css string) {
	b.t.Helper()
	b.do("POST", "/element/"+b.wait(css)+"/click", map[string]any{}, nil)
}

func (b *browser) typeIn(css, text string) {
	b.t.Helper()
	b.do("POST", "/element/"+b.wait(css)+"/value", map[string]string{"text": text}, nil)
}

// read gets what of the element css selects, finding it again when the
// page reloaded under it (the inbox reloads itself when requests change).
func (b *browser) read(css, what string) string {
	b.t.Helper()
	var v string
	var err error
	for range 20 {
		if err = b.try("GET", "/element/"+b.wait(css)+what, nil, &v); err == nil {
			return v
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatal(err)
	return ""
}

func (b *browser) attr(css, name string) string { b.t.Helper(); return b.read(css, "/attribute/"+name) }

func (b *browser) text(css string) string { b.t.Helper(); return b.read(css, "/text") }

// screenshots makes the browser test write its screenshots into
// docs/panel (make docs); otherwise they are taken and checked, not kept.
var screenshots = flag.Bool("screenshots", false, "write the pages' screenshots into docs/panel")

// screenshot takes a screenshot of the page, saved as docs/panel/<name>.png
// with -screenshots.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	b.try("POST", "/execute/sync", map[string]any{"script": "window.scrollTo(0, 0)", "args": []any{}}, nil)
	var data string
	b.do("GET", "/screenshot", nil, &data)
	png, err := base64.StdEncoding.DecodeString(data)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		b.t.Fatalf("screenshot %s: not a PNG (%v)", name, err)
	}
	if !*screenshots {
		return
	}
	dir := filepath.Join("..", "docs", "panel")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// eventually waits for cond, failing t after a generous bound: the bound
// only ends a test that would otherwise hang, it measures nothing.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// contains reports whether the page's text holds s.
func (b *browser) contains(s string) bool {
	return strings.Contains(b.text("body"), s)
}
