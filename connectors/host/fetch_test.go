package host_test

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fetchServer is a local https server whose certificate the host instance
// trusts through fetch_ca_file.
func fetchServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/tool.sh", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("#!/bin/sh\necho hi\n")) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the cap is enforced while reading.
		for range 4 {
			w.Write([]byte(strings.Repeat("x", 1000)))
			w.(http.Flusher).Flush()
		}
	})
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/to-http", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/tool.sh", http.StatusFound)
	})
	mux.HandleFunc("/to-https", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/tool.sh", http.StatusFound)
	})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, ca
}

func TestNetFetch(t *testing.T) {
	srv, ca := fetchServer(t)
	ws, g := workspace(t, "allow_fetch: true\nallow_private_networks: true\nfetch_allowlist: [127.0.0.1]\nfetch_max_bytes: 2048\nfetch_ca_file: "+ca)
	cs := g.connect(t, nil)

	// A file with the executable bit where the download lands is replaced,
	// not written through.
	if err := os.MkdirAll(filepath.Join(ws, "downloads"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "downloads", "tool.sh"), []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := ok(t, cs, "net_fetch", map[string]any{"url": srv.URL + "/tool.sh"})
	if r["path"] != "downloads/tool.sh" || r["bytes"].(float64) != 18 || r["mode"] != "0644" {
		t.Fatalf("net_fetch: %v", r)
	}
	st, err := os.Stat(filepath.Join(ws, "downloads", "tool.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o111 != 0 {
		t.Fatalf("the download is executable: %v", st.Mode())
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "downloads", "tool.sh")); string(b) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("content: %q", b)
	}
	ok(t, cs, "net_fetch", map[string]any{"url": srv.URL + "/to-https", "name": "again.sh"})

	fails(t, cs, "net_fetch", map[string]any{"url": strings.Replace(srv.URL, "https://", "http://", 1) + "/tool.sh"}, "PERMISSION_DENIED")
	fails(t, cs, "net_fetch", map[string]any{"url": srv.URL + "/to-http", "name": "redirected.sh"}, "PERMISSION_DENIED")
	fails(t, cs, "net_fetch", map[string]any{"url": strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/tool.sh"}, "PERMISSION_DENIED")
	fails(t, cs, "net_fetch", map[string]any{"url": srv.URL + "/big"}, "INVALID_ARGUMENT")
	fails(t, cs, "net_fetch", map[string]any{"url": srv.URL + "/tool.sh", "name": "../escape.sh"}, "INVALID_ARGUMENT")
	ents, _ := os.ReadDir(filepath.Join(ws, "downloads"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "again.sh tool.sh" {
		t.Fatalf("downloads holds %v: a refused download left something", names)
	}

	// A download directory on PATH is refused.
	t.Setenv("PATH", filepath.Join(ws, "downloads")+string(os.PathListSeparator)+os.Getenv("PATH"))
	fails(t, cs, "net_fetch", map[string]any{"url": srv.URL + "/tool.sh", "name": "x.sh"}, "PERMISSION_DENIED")
}

// Without allow_private_networks the local server is out of reach.
func TestNetFetchPrivateRefused(t *testing.T) {
	srv, ca := fetchServer(t)
	_, g := workspace(t, "allow_fetch: true\nfetch_ca_file: "+ca)
	cs := g.connect(t, nil)
	o := call(t, cs, "net_fetch", map[string]any{"url": srv.URL + "/tool.sh"})
	if !o.isError {
		t.Fatalf("reached a loopback server: %s", o.text)
	}
}
