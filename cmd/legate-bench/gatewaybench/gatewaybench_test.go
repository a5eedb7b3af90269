package gatewaybench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
)

func peerNamed(t *testing.T, bin string) peer {
	t.Helper()
	for _, p := range peers {
		if p.bin == bin {
			return p
		}
	}
	t.Fatalf("no peer %s", bin)
	return peer{}
}

func TestRunWithoutPeersSkipsNamingTheScript(t *testing.T) {
	t.Setenv("LEGATE_TOOLS_DIR", t.TempDir())
	scratch := t.TempDir()
	var logged []string
	o := benchkit.Options{Legate: "/nonexistent/legate", Dir: scratch, Rounds: 1, Warmup: time.Millisecond, Window: time.Millisecond,
		C: []int{1}, Logf: func(f string, args ...any) { logged = append(logged, f) }}
	rows, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(peers) {
		t.Fatalf("%d rows, want one SKIP row per peer (%d): %+v", len(rows), len(peers), rows)
	}
	for i, r := range rows {
		if r.Result != "SKIP" || !strings.Contains(r.Metric, "bash "+Script) || !strings.Contains(r.Metric, peers[i].name) {
			t.Errorf("row %+v: want SKIP naming %s and `bash %s`", r, peers[i].name, Script)
		}
		if r.Legate == r.Legate || r.Baseline == r.Baseline {
			t.Errorf("a skipped row holds a figure: %+v", r)
		}
	}
	if len(logged) != len(peers) {
		t.Errorf("logged %q, want a line per peer", logged)
	}
	// Nothing was started, so nothing was written.
	if entries, _ := os.ReadDir(scratch); len(entries) != 0 {
		t.Errorf("the scratch directory holds %d entries, want none", len(entries))
	}
}

// The installed peers are those whose binary and .info are there; a
// missing one is skipped alone, naming the script.
func TestInstalledReadsVersionAndCommitAndSkipsTheMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable() // a Go binary whose build info names go-sdk, as docker-mcp's does
	if err != nil {
		t.Fatal(err)
	}
	docker := peerNamed(t, "docker-mcp")
	bin := filepath.Join(dir, "bin", docker.bin)
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	var logged []string
	logf := func(f string, args ...any) { logged = append(logged, f) }
	if found, _ := installed(dir, logf); slices.ContainsFunc(found, func(r ready) bool { return r.bin == docker.bin }) {
		t.Fatal("a binary without its .info counted as installed")
	}
	info := `{"Version":"v0.43.1","Time":"2026-06-25T18:26:01Z","Origin":{"VCS":"git","URL":"https://github.com/docker/mcp-gateway","Hash":"8f422b601a284413788af43d6a654ca65616a1a0","Ref":"refs/tags/v0.43.1"}}`
	if err := os.WriteFile(bin+".info", []byte(info), 0o644); err != nil {
		t.Fatal(err)
	}
	found, skips := installed(dir, logf)
	if len(found) != 1 || found[0].bin != docker.bin {
		t.Fatalf("found %+v, want docker-mcp alone", found)
	}
	b := found[0].build
	s := b.String()
	// (A test binary records no dependencies: sdkOf is tested apart.)
	for _, want := range []string{"v0.43.1", "8f422b601a28", "https://github.com/docker/mcp-gateway", "go1.", docker.sdk} {
		if !strings.Contains(s, want) {
			t.Errorf("build %q lacks %q", s, want)
		}
	}
	if len(skips) != len(peers)-1 || !strings.Contains(skips[0].Metric, "mcp-proxy is not installed") || !strings.Contains(skips[0].Metric, "bash "+Script) {
		t.Errorf("skips %+v: want mcp-proxy's, naming the script", skips)
	}
}

func TestSDKOfNamesTheVersionBuilt(t *testing.T) {
	bi := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "github.com/google/uuid", Version: "v1.6.0"},
		{Path: "github.com/mark3labs/mcp-go", Version: "v0.43.2"},
		{Path: "github.com/modelcontextprotocol/go-sdk", Version: "v1.4.0", Replace: &debug.Module{Path: "github.com/modelcontextprotocol/go-sdk", Version: "v1.4.1"}},
	}}
	for sdk, want := range map[string]string{
		"github.com/mark3labs/mcp-go":            "github.com/mark3labs/mcp-go v0.43.2",
		"github.com/modelcontextprotocol/go-sdk": "github.com/modelcontextprotocol/go-sdk v1.4.1",
		"example.com/absent":                     "example.com/absent (not in its build info)",
	} {
		if got := sdkOf(bi, sdk); got != want {
			t.Errorf("sdkOf(%s) = %q, want %q", sdk, got, want)
		}
	}
}

// mcpProxyV2 mirrors TBXark/mcp-proxy v0.43.2's Config (config.go), the
// fields it reads: decoding refuses any other.
type mcpProxyV2 struct {
	McpProxy *struct {
		BaseURL string          `json:"baseURL"`
		Addr    string          `json:"addr"`
		Name    string          `json:"name"`
		Version string          `json:"version"`
		Type    string          `json:"type"`
		Options json.RawMessage `json:"options"`
	} `json:"mcpProxy"`
	McpServers map[string]*struct {
		TransportType string            `json:"transportType"`
		Command       string            `json:"command"`
		URL           string            `json:"url"`
		Headers       map[string]string `json:"headers"`
	} `json:"mcpServers"`
}

func TestMCPProxyConfigIsWellFormed(t *testing.T) {
	e := launchEnv{bin: "/x/mcp-proxy", scratch: t.TempDir(), addr: "127.0.0.1:4242", upstream: "http://127.0.0.1:4343/mcp"}
	argv, env, endpoint, err := peerNamed(t, "mcp-proxy").launch(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(argv) != 3 || argv[0] != e.bin || argv[1] != "-config" || env != nil {
		t.Fatalf("argv %q env %q", argv, env)
	}
	raw, err := os.ReadFile(argv[2])
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c mcpProxyV2
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	p := c.McpProxy
	if p == nil || p.Addr != e.addr || p.Type != "streamable-http" {
		t.Fatalf("mcpProxy %+v: want streamable-http on %s (the default is SSE)", p, e.addr)
	}
	// Each server is served at path.Join(baseURL's path, name) + "/".
	u, err := url.Parse(p.BaseURL)
	if err != nil || (u.Path != "" && u.Path != "/") {
		t.Errorf("baseURL %q: want no path", p.BaseURL)
	}
	s := c.McpServers[upstreamID]
	if len(c.McpServers) != 1 || s == nil || s.URL != e.upstream || s.TransportType != "streamable-http" || s.Command != "" {
		t.Errorf("mcpServers %s: want only %q, over streamable-http (else SSE)", raw, upstreamID)
	}
	if endpoint != "http://"+e.addr+"/"+upstreamID+"/" {
		t.Errorf("endpoint %q", endpoint)
	}
}

// dockerTopLevel mirrors the catalog docker/mcp-gateway v0.43.1 reads
// (pkg/catalog/types.go), the fields written: decoding refuses any other.
type dockerTopLevel struct {
	Registry map[string]struct {
		Title       string `yaml:"title"`
		Description string `yaml:"description"`
		Type        string `yaml:"type"`
		Image       string `yaml:"image"`
		Remote      struct {
			URL       string `yaml:"url"`
			Transport string `yaml:"transport_type"`
		} `yaml:"remote"`
	} `yaml:"registry"`
}

func TestDockerGatewayCatalogAndCommandAreWellFormed(t *testing.T) {
	e := launchEnv{bin: "/x/docker-mcp", scratch: t.TempDir(), addr: "127.0.0.1:4242", upstream: "http://127.0.0.1:4343/mcp"}
	argv, env, endpoint, err := peerNamed(t, "docker-mcp").launch(e)
	if err != nil {
		t.Fatal(err)
	}
	home := ""
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = h
		}
	}
	for _, want := range []string{"DOCKER_MCP_IN_CONTAINER=1", "DOCKER_MCP_ALLOW_INSECURE_REMOTE_URLS=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("env %q lacks %s", env, want)
		}
	}
	if !strings.HasPrefix(home, e.scratch) {
		t.Fatalf("HOME %q is not under the scratch directory", home)
	}
	// --catalog reads a local file only under ~/.docker/mcp/catalogs.
	raw, err := os.ReadFile(filepath.Join(home, ".docker", "mcp", "catalogs", dockerCatalogFile))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var c dockerTopLevel
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	s, ok := c.Registry[upstreamID]
	if len(c.Registry) != 1 || !ok || s.Type != "remote" || s.Image != "" || s.Remote.URL != e.upstream || s.Remote.Transport != "streamable-http" {
		t.Errorf("catalog %s: want %q alone, a remote server over streamable-http at %s", raw, upstreamID, e.upstream)
	}
	flag := func(name string) string {
		i := slices.Index(argv, name)
		if i < 0 || i+1 >= len(argv) {
			return ""
		}
		return argv[i+1]
	}
	if argv[0] != e.bin || !slices.Equal(argv[1:3], []string{"gateway", "run"}) {
		t.Errorf("argv %q: want %s gateway run", argv, e.bin)
	}
	for name, want := range map[string]string{"--catalog": dockerCatalogFile, "--servers": upstreamID, "--transport": "streaming", "--host": "127.0.0.1", "--port": "4242"} {
		if got := flag(name); got != want {
			t.Errorf("%s %q, want %q", name, got, want)
		}
	}
	for _, want := range []string{"--static", "--allow-unauthenticated"} {
		if !slices.Contains(argv, want) {
			t.Errorf("argv %q lacks %s", argv, want)
		}
	}
	if fi, err := os.Stat(flag("--secrets")); err != nil || fi.Size() != 0 {
		t.Errorf("--secrets %q: want an empty file (%v)", flag("--secrets"), err)
	}
	if endpoint != "http://"+e.addr+"/mcp" {
		t.Errorf("endpoint %q", endpoint)
	}
}

// The rows put each other gateway in the baseline column and Legate's
// figure over it in the ratio; the peer's build is said once.
func TestRowsAreLegateOverEachOther(t *testing.T) {
	mk := func(name, note string, rate, p50, cpu float64) *side {
		return &side{name: name, note: note, res: map[int]*series{
			1: {rate: []float64{rate, rate}, p50: []float64{p50, p50}, cpu: []float64{cpu, cpu}},
			8: {rate: []float64{2 * rate, 2 * rate}, p50: []float64{p50, p50}, cpu: []float64{cpu, cpu}},
		}}
	}
	sides := []*side{mk("Legate", "", 1000, 100, 50), mk("the plain proxy", "ref", 2000, 50, 25), mk("peer v1", "peer v1 (commit abc)", 500, 400, 200)}
	rows := rows([]int{1, 8}, sides)
	if len(rows) != 2*2*3 {
		t.Fatalf("%d rows, want 12", len(rows))
	}
	peerRate, peerCPU := rows[6], rows[8]
	if peerRate.Baseline != 500 || peerRate.Legate != 1000 || peerRate.Ratio != 2 || !strings.Contains(peerRate.Metric, "Legate against peer v1") || peerRate.Note != "peer v1 (commit abc)" {
		t.Errorf("rate row %+v: want 1000 over 500, 2×, with the peer's note", peerRate)
	}
	if peerCPU.Ratio != 0.25 || peerCPU.Unit != "µs" {
		t.Errorf("CPU row %+v: want 0.25×", peerCPU)
	}
	if rows[9].Note != "" || !strings.Contains(rows[9].Metric, "C=8") {
		t.Errorf("second C's rate row %+v: want no note", rows[9])
	}
	if rows[0].Ratio != 0.5 {
		t.Errorf("proxy rate row %+v: want 0.5×", rows[0])
	}
}
