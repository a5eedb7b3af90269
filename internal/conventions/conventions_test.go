// Package conventions_test checks, over the whole tree, the rules of the
// code base that no compiler checks: the import direction, the shape of a
// connector package, and that adding a connector type touches nothing but
// its own folder and its connectors/all file.
package conventions_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
	_ "github.com/legate-mcp/legate/connectors/all"
)

const module = "github.com/legate-mcp/legate"

// helpers are the packages under connectors/ that are not connector types.
var helpers = []string{"all", "connectortest", "embeddings", "htmltext", "httpkit", "netguard", "saas", "sqlbase"}

type pkg struct {
	ImportPath string
	Doc        string
	Dir        string
	Imports    []string
	GoFiles    []string
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

// under reports whether package rp is pkg or one of its sub-packages.
func under(rp, pkg string) bool { return rp == pkg || strings.HasPrefix(rp, pkg+"/") }

func connectorTypeDir(rp string) bool {
	if !strings.HasPrefix(rp, "connectors/") {
		return false
	}
	rest := strings.TrimPrefix(rp, "connectors/")
	return !strings.Contains(rest, "/") && !slices.Contains(helpers, rest)
}

// connectorImports are the packages of this module a connector type may
// import. search imports nothing of the module: the kb connector ranks
// passages with its text analysis and BM25. telemetry/spans depends on
// the OpenTelemetry API alone: a connector notes what its call's trace
// should tell.
var connectorImports = []string{"", "connectors", "internal/contentcoding", "connectors/netguard", "connectors/httpkit", "connectors/embeddings", "connectors/htmltext", "connectors/saas", "connectors/saas/model", "connectors/sqlbase", "search", "telemetry/spans", "provenance"}

func TestImportDirection(t *testing.T) {
	for _, p := range listPackages(t) {
		from := rel(p.ImportPath)
		for _, imp := range p.Imports {
			if from == "" && strings.Contains(strings.Split(imp, "/")[0], ".") {
				t.Errorf("the vocabulary package imports %s: it depends on the standard library only", imp)
			}
			if !strings.HasPrefix(imp, module) {
				continue
			}
			to := rel(imp)
			switch {
			case from == "":
				t.Errorf("the vocabulary package imports %s: every package may import it, so it imports none of them", to)
			case from == "search" && to != "":
				t.Errorf("search imports %s: connectors import search (the kb connector ranks with it), so it imports nothing of the module but the vocabulary", to)
			case to == "server/servertest": // Imports lists non-test code's imports only
				t.Errorf("%s imports %s: only tests may import it", from, to)
			case (strings.HasPrefix(to, "cmd/") || to == "server") && !strings.HasPrefix(from, "cmd/") && from != "server/servertest":
				t.Errorf("%s imports %s: only cmd (and server/servertest, for tests) may import cmd or server", from, to)
			case connectorTypeDir(from) && !slices.Contains(connectorImports, to) && !strings.HasPrefix(to, from+"/"):
				t.Errorf("connector %s imports %s: a connector imports only the vocabulary, connectors, its kits (netguard, httpkit, embeddings, htmltext, saas, sqlbase, search), provenance and its own sub-packages", from, to)
			case strings.HasPrefix(from, "connectors/saas") && !slices.Contains(connectorImports, to):
				t.Errorf("%s imports %s: the SaaS toolkit imports only what a connector may, so that a connector never reaches the store through it", from, to)
			case connectorTypeDir(path.Dir(from)) && !slices.Contains(connectorImports, to) && !strings.HasPrefix(to, path.Dir(from)+"/"):
				t.Errorf("%s imports %s: a connector's own package imports only what its connector may", from, to)
			case under(from, "upstream") && under(to, "connectors"):
				t.Errorf("%s imports %s: the upstreams do not depend on the connectors; what both need lives below them (internal/contentcoding)", from, to)
			case under(from, "audit") && under(to, "upstream"):
				t.Errorf("%s imports %s: audit sits below upstream; it defines what it reads of an upstream (audit.UpstreamStatus)", from, to)
			case from == "connectors" && to != "" && to != "internal/strictyaml":
				t.Errorf("the connector contract imports %s", to)
			case connectorTypeDir(to) && from != "connectors/all" && !strings.HasPrefix(from, "cmd/") && !connectorTypeDir(from):
				t.Errorf("%s imports the connector type %s: only connectors/all and cmd import connector types; register a tool as a connector instead", from, to)
			case from == "connectors/all" && !connectorTypeDir(to):
				t.Errorf("connectors/all imports %s, which is not a connector type", to)
			}
		}
	}
}

// TestPackagesHaveADoc: every package says what it is for in a package
// comment (a doc.go or its main file), as a split leaves new packages.
func TestPackagesHaveADoc(t *testing.T) {
	for _, p := range listPackages(t) {
		if len(p.GoFiles) > 0 && p.Doc == "" {
			t.Errorf("%s has no package comment: say what it is for, in doc.go or its main file", rel(p.ImportPath))
		}
	}
}

func TestConnectorPackagesAreComplete(t *testing.T) {
	base := filepath.Join(root(t), "connectors")
	dirs, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || slices.Contains(helpers, d.Name()) {
			continue
		}
		name := d.Name()
		for _, f := range []string{"README.md", "sample.yaml"} {
			if _, err := os.Stat(filepath.Join(base, name, f)); err != nil {
				t.Errorf("connectors/%s has no %s", name, f)
			}
		}
		b, err := os.ReadFile(filepath.Join(base, "all", name+".go"))
		if err != nil || !strings.Contains(string(b), `"`+module+"/connectors/"+name+`"`) {
			t.Errorf("connectors/all/%s.go does not import connectors/%s", name, name)
		}
		// The build tag that lets a custom build name the type (docs/build.md).
		if tag := "//go:build !custom || connector_" + name + "\n"; err == nil && !strings.HasPrefix(string(b), tag) {
			t.Errorf("connectors/all/%s.go does not begin with %q", name, strings.TrimSpace(tag))
		}
		tests, _ := filepath.Glob(filepath.Join(base, name, "*_test.go"))
		found := false
		for _, f := range tests {
			b, _ := os.ReadFile(f)
			found = found || strings.Contains(string(b), "connectortest.Run(")
		}
		if !found {
			t.Errorf("connectors/%s: no test runs connectortest.Run", name)
		}
	}
}

// TestConnectorsRegisterTyped keeps connector types on connectors.TypeOf,
// which hands New its config typed: no type asserts Instance.Config.
func TestConnectorsRegisterTyped(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root(t), "connectors", "*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		dir := filepath.Base(filepath.Dir(f))
		if slices.Contains(helpers, dir) || strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`\.Config\.\(`).Match(b) {
			t.Errorf("connectors/%s/%s asserts the type of Instance.Config: register with connectors.TypeOf", dir, filepath.Base(f))
		}
	}
}

var secretLooking = regexp.MustCompile(`(?i)(token|secret|password|passwd|api_?key|private_?key|credential|(^|_)keys?($|_))`)

var credentialName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestSecretsAreCredentialsNotConfig keeps secrets out of plain config:
// every registered type declares its secrets as credentials (given by
// reference, resolved per call, masked), each named and described, and no
// config field of any kind — a string, a list, a map — has a name that
// looks like a secret or is a credential's name.
func TestSecretsAreCredentialsNotConfig(t *testing.T) {
	for _, ct := range connectors.Types() {
		seen := map[string]bool{}
		for _, c := range ct.Credentials {
			if !credentialName.MatchString(c.Name) || strings.TrimSpace(c.Description) == "" || seen[c.Name] {
				t.Errorf("type %s: credential %q: needs a unique name matching %s and a description", ct.Name, c.Name, credentialName)
			}
			seen[c.Name] = true
		}
		if ct.Config == nil {
			continue
		}
		fields, err := connectors.FieldsOf(ct.Config())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fields {
			if secretLooking.MatchString(f.Name) || seen[f.Name] {
				t.Errorf("type %s: config field %q (%s) looks secret; declare it as a credential so it is given by reference", ct.Name, f.Name, f.Kind)
			}
		}
	}
}

func TestSecretLookingNames(t *testing.T) {
	for name, want := range map[string]bool{
		"bot_token": true, "api_key": true, "apikey": true, "key": true, "signing_key": true, "client_secret": true,
		"password": true, "keys": true, "base_url": false, "header_name": false, "monkey_mode": false, "keyword": false,
	} {
		if got := secretLooking.MatchString(name); got != want {
			t.Errorf("%q looks secret: %v, want %v", name, got, want)
		}
	}
}

// TestAddingAConnectorTouchesOnlyItsFolder adds a connector type with an
// overlay — a new folder and a new connectors/all file, nothing else — and
// checks that the built binary lists the type and serves its tool.
func TestAddingAConnectorTouchesOnlyItsFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	r := root(t)
	files := map[string]string{
		filepath.Join(r, "connectors", "probe", "probe.go"): `package probe

import (
	"context"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

type Config struct {
	Greeting string ` + "`" + `yaml:"greeting" default:"hello" desc:"What to say"` + "`" + `
}

type probe struct{ greeting string }

type args struct{}

func (p *probe) Validate() error                                    { return nil }
func (p *probe) Test(context.Context, connectors.Credentials) error { return nil }
func (p *probe) Tools() []connectors.Tool {
	return []connectors.Tool{connectors.NewTool("hello", "Say hello.", legate.ClassRead,
		func(ctx context.Context, call *connectors.Call, in *args) (*legate.Result, error) {
			return &legate.Result{Text: p.greeting}, nil
		})}
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{Name: "probe", Description: "a probe"},
		func(_ connectors.Instance, cfg *Config) (connectors.Connector, error) {
			return &probe{greeting: cfg.Greeting}, nil
		}))
}
`,
		filepath.Join(r, "connectors", "all", "probe.go"): "//go:build !custom || connector_probe\n\npackage all\n\nimport _ \"" + module + "/connectors/probe\"\n",
	}
	overlay := map[string]map[string]string{"Replace": {}}
	for path, content := range files {
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("%s exists already", path)
		}
		tmp := filepath.Join(dir, fmt.Sprintf("f%d.go", len(overlay["Replace"])))
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay["Replace"][path] = tmp
	}
	ov, _ := json.Marshal(overlay)
	ovPath := filepath.Join(dir, "overlay.json")
	os.WriteFile(ovPath, ov, 0o644)
	bin := filepath.Join(dir, "legate")
	build := exec.Command("go", "build", "-overlay", ovPath, "-o", bin, "./cmd/legate")
	build.Dir = r
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build with the new connector: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("connectors:\n  - type: probe\n"), 0o644)
	run := func(args ...string) string {
		cmd := exec.Command(bin, append(args, "--config", cfg, "--state-dir", filepath.Join(dir, "state"))...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("legate %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := run("connector", "types"); !strings.Contains(out, "probe — a probe") || !strings.Contains(out, "config.greeting") {
		t.Errorf("connector types does not list the new type:\n%s", out)
	}
	if out := run("tools", "call", "probe.hello"); !strings.Contains(out, `"text": "hello"`) {
		t.Errorf("the new tool did not answer:\n%s", out)
	}
}
