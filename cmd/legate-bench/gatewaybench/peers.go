package gatewaybench

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
)

// Script installs the peers, at pinned versions, in Dir.
const Script = "scripts/gateways.sh"

// Dir is where Script installs the peers: $LEGATE_TOOLS_DIR/gateways,
// else ~/.cache/legate-tools/gateways.
func Dir() string {
	if d := os.Getenv("LEGATE_TOOLS_DIR"); d != "" {
		return filepath.Join(d, "gateways")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "legate-tools", "gateways")
}

// peer is another MCP gateway, run in front of P1's upstream.
type peer struct {
	name string // as people know it
	bin  string // its binary under bin/ in Dir
	sdk  string // the MCP library it is built on (a module path)
	// differs is what it does that Legate's forwarding does not, or skips.
	differs string
	// launch writes its configuration in e.scratch and returns the argv
	// and environment that run it on e.addr in front of e.upstream, and
	// the URL of its MCP endpoint.
	launch func(e launchEnv) (argv, env []string, endpoint string, err error)
}

// launchEnv is where a peer runs: the binary, a scratch directory of its
// own, the loopback address it listens on and the upstream's MCP URL.
type launchEnv struct {
	bin, scratch, addr, upstream string
}

// upstreamID is the name every gateway gives P1's upstream.
const upstreamID = "up"

var peers = []peer{
	{
		name: "TBXark/mcp-proxy", bin: "mcp-proxy", sdk: "github.com/mark3labs/mcp-go",
		differs: "mcp-go; one upstream client (Streamable HTTP) shared by every client; serves Streamable HTTP statelessly (no session, protocol 2025-06-18 negotiated); no policy, no audit, its request log off (its default)",
		launch: func(e launchEnv) ([]string, []string, string, error) {
			cfg, err := mcpProxyConfig(e.addr, e.upstream)
			if err != nil {
				return nil, nil, "", err
			}
			path := filepath.Join(e.scratch, "mcp-proxy.json")
			if err := os.WriteFile(path, cfg, 0o600); err != nil {
				return nil, nil, "", err
			}
			return []string{e.bin, "-config", path}, nil, "http://" + e.addr + "/" + upstreamID + "/", nil
		},
	},
	{
		name: "docker/mcp-gateway", bin: "docker-mcp", sdk: "github.com/modelcontextprotocol/go-sdk",
		differs: "go-sdk; the upstream as a remote server of a catalog file, one upstream session per client session; `gateway run` with its defaults on a host (every call logged, arguments and results scanned for secrets), no Docker engine: DOCKER_MCP_IN_CONTAINER=1 and --static so that it asks none, DOCKER_MCP_ALLOW_INSECURE_REMOTE_URLS=1 for a loopback http:// URL, --allow-unauthenticated instead of its bearer token",
		launch: func(e launchEnv) ([]string, []string, string, error) {
			home := filepath.Join(e.scratch, "home")
			catalogs := filepath.Join(home, ".docker", "mcp", "catalogs")
			if err := os.MkdirAll(catalogs, 0o700); err != nil {
				return nil, nil, "", err
			}
			if err := os.WriteFile(filepath.Join(catalogs, dockerCatalogFile), []byte(dockerCatalog(e.upstream)), 0o600); err != nil {
				return nil, nil, "", err
			}
			secrets := filepath.Join(e.scratch, "secrets.env")
			if err := os.WriteFile(secrets, nil, 0o600); err != nil {
				return nil, nil, "", err
			}
			argv, err := dockerArgs(e.bin, e.addr, secrets)
			if err != nil {
				return nil, nil, "", err
			}
			return argv, dockerEnv(home), "http://" + e.addr + "/mcp", nil
		},
	},
}

// mcpProxyConfig is TBXark/mcp-proxy's config.json (its V2 format):
// Streamable HTTP on addr, with one server, the upstream over Streamable
// HTTP, served at /up/.
func mcpProxyConfig(addr, upstream string) ([]byte, error) {
	type server struct {
		TransportType string `json:"transportType"`
		URL           string `json:"url"`
	}
	return json.MarshalIndent(map[string]any{
		"mcpProxy": map[string]any{
			"baseURL": "http://" + addr, "addr": addr, "name": "legate-bench", "version": "1", "type": "streamable-http",
		},
		"mcpServers": map[string]server{upstreamID: {TransportType: "streamable-http", URL: upstream}},
	}, "", "  ")
}

// dockerCatalogFile is the catalog's name under ~/.docker/mcp/catalogs,
// the only directory `gateway run --catalog` reads a local file from.
const dockerCatalogFile = "legate-bench.yaml"

// dockerCatalog is docker/mcp-gateway's catalog with the upstream as its
// one server, a remote one over Streamable HTTP.
func dockerCatalog(upstream string) string {
	return fmt.Sprintf(`registry:
  %s:
    title: legate-bench upstream
    description: P1's echo upstream
    type: remote
    remote:
      url: %q
      transport_type: streamable-http
`, upstreamID, upstream)
}

// dockerArgs runs `gateway run` over Streamable HTTP on addr with the
// catalog's one server; the flags not given keep the defaults of a run on
// a host (--log-calls, --block-secrets).
func dockerArgs(bin, addr, secrets string) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	return []string{bin, "gateway", "run", "--catalog", dockerCatalogFile, "--servers", upstreamID,
		"--transport", "streaming", "--host", host, "--port", port, "--allow-unauthenticated",
		"--secrets", secrets, "--static", "--verify-signatures=false", "--verbose=false"}, nil
}

// dockerEnv is the environment of `gateway run` without a Docker engine:
// home is its HOME (the catalog, the CLI's config). DOCKER_MCP_IN_CONTAINER
// skips the CLI's check of the engine at start-up (and, with --static, the
// look-up of its networks); the other allows an http:// loopback upstream.
func dockerEnv(home string) []string {
	return []string{"HOME=" + home, "DOCKER_CONFIG=" + filepath.Join(home, ".docker"),
		"DOCKER_MCP_IN_CONTAINER=1", "DOCKER_MCP_ALLOW_INSECURE_REMOTE_URLS=1"}
}

// build is what a peer's binary is: its module's version and VCS
// revision (from the .info Script copies beside it) and the Go and MCP
// library it was built with (from the binary).
type build struct {
	Version string
	Time    string
	Origin  struct{ URL, Hash string }
	Go, SDK string
}

// String is the build as the report prints it.
func (b build) String() string {
	hash := b.Origin.Hash
	if len(hash) > 12 {
		hash = hash[:12]
	}
	return fmt.Sprintf("%s (commit %s of %s), %s, %s", b.Version, hash, b.Origin.URL, b.Go, b.SDK)
}

// readBuild reads the build of p's binary in dir, or says why it cannot
// run, naming Script.
func readBuild(dir string, p peer) (build, error) {
	var b build
	bin := filepath.Join(dir, "bin", p.bin)
	if _, err := os.Stat(bin); err != nil {
		return b, fmt.Errorf("%s is not installed in %s: run `bash %s` (LEGATE_TOOLS_DIR chooses the cache)", p.bin, dir, Script)
	}
	raw, err := os.ReadFile(bin + ".info")
	if err != nil {
		return b, fmt.Errorf("%s.info is missing in %s: run `bash %s`", p.bin, filepath.Dir(bin), Script)
	}
	if err := json.Unmarshal(raw, &b); err != nil || b.Version == "" || b.Origin.Hash == "" {
		return b, fmt.Errorf("%s.info holds no version and revision (%v): run `bash %s`", bin, err, Script)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return b, fmt.Errorf("%s: %w", bin, err)
	}
	b.Go, b.SDK = bi.GoVersion, sdkOf(bi, p.sdk)
	return b, nil
}

// sdkOf is the module sdk with the version bi was built with.
func sdkOf(bi *debug.BuildInfo, sdk string) string {
	for _, d := range bi.Deps {
		if d.Path == sdk {
			if d.Replace != nil {
				d = d.Replace
			}
			return d.Path + " " + d.Version
		}
	}
	return sdk + " (not in its build info)"
}
