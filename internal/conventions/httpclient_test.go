package conventions_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// unguardedHTTP are the files (or folders, ending in /) that may make an
// HTTP client of their own, or use net/http's default one, and why: every
// other outbound request goes through connectors/netguard, which checks
// the address dialed, redirects included, against server-side request
// forgery. A new entry needs a reason a reviewer would accept: the request
// goes to an address the operator chose, or to Legate itself.
var unguardedHTTP = map[string]string{
	"connectors/netguard/netguard.go": "the guard itself: its client and transport are the ones everybody else uses",
	"upstream/dial/dial.go":           "an upstream's URL is the operator's configuration, and its sessions stream for their whole life (no overall timeout, which netguard's client has); its transport is the upstream's own",
	"upstream/session.go":             "wraps the upstream's own transport (upstream/dial) to tap a legacy SSE stream",
	"upstream/upstream.go":            "wraps the upstream's own transport (upstream/dial) to tap and bound its messages",
	"upstream/principal.go":           "wraps the upstream's own transport (upstream/dial) with a principal's token",
	"telemetry/spans/spans.go":        "a wrapper that adds trace context to the transport its caller gives; net/http's default only stands for a nil one, as in net/http",
	"connections/credentials.go":      "wraps the transport of the client given (netguard's) to add the resource indicator; net/http's default only stands for a nil one, as in net/http",
	"admin/client.go":                 "the admin CLI's client of Legate's own admin API, at the address the operator gives",
	"cmd/legate/health.go":            "the CLI's health check of Legate's own server",
	"local/locate.go":                 "the CLI's client of the admin API of Legate's own server, over the Unix socket in its state directory",
	"doctor/doctor.go":                "legate doctor reads the clock of Legate's own server",
	"server/servertest/servertest.go": "serves a gateway for tests (only tests import it) and waits for it on loopback",
	"connectors/saas/oauthtest/":      "stand-in OAuth providers and clients for tests (only tests import it), on loopback",
	"cmd/legate-bench/":               "the benchmark drives processes it started itself, on loopback",
}

// TestHTTPClientsAreGuarded fails on any construction of an http.Client
// or http.Transport, any use of http.DefaultClient or
// http.DefaultTransport, of net/http's package-level request functions
// (Get, Head, Post, PostForm), of oauth2.NewClient or of go-cleanhttp, in
// a non-test file not listed in unguardedHTTP: such a client would reach
// any address a URL names, an internal one included.
func TestHTTPClientsAreGuarded(t *testing.T) {
	dir := root(t)
	used := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rp, _ := filepath.Rel(dir, p)
		rp = filepath.ToSlash(rp)
		finds := unguarded(t, p)
		if len(finds) == 0 {
			return nil
		}
		if key := allowedKey(rp); key != "" {
			used[key] = true
			return nil
		}
		for _, f := range finds {
			t.Errorf("%s: %s bypasses connectors/netguard: make the client with netguard.NewClient (Options.Allow admits a host the operator configured), or list the file in unguardedHTTP with the reason it is not an outbound request to an untrusted address", strings.TrimPrefix(f.pos, dir+string(filepath.Separator)), f.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range unguardedHTTP {
		if !used[key] {
			t.Errorf("unguardedHTTP lists %s, which makes no HTTP client of its own any more: remove it", key)
		}
	}
}

// allowedKey is the unguardedHTTP entry that covers the file rp, "" for none.
func allowedKey(rp string) string {
	if _, ok := unguardedHTTP[rp]; ok {
		return rp
	}
	for key := range unguardedHTTP {
		if strings.HasSuffix(key, "/") && strings.HasPrefix(rp, key) {
			return key
		}
	}
	return ""
}

type finding struct{ pos, what string }

// unguarded lists the HTTP clients the file at p makes or uses
// without netguard.
func unguarded(t *testing.T, p string) []finding {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // local name -> import path
	var out []finding
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		names[local] = path
		if strings.Contains(path, "go-cleanhttp") {
			out = append(out, finding{fset.Position(imp.Pos()).String(), "importing " + path})
		}
	}
	// pkgSel reports the package path and name of a selector pkg.Name.
	pkgSel := func(e ast.Expr) (string, string) {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", ""
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", ""
		}
		return names[id.Name], sel.Sel.Name
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var what string
		switch n := n.(type) {
		case *ast.CompositeLit:
			if path, name := pkgSel(n.Type); path == "net/http" && (name == "Client" || name == "Transport") {
				what = "an http." + name + " literal"
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
				if path, name := pkgSel(n.Args[0]); path == "net/http" && (name == "Client" || name == "Transport") {
					what = "new(http." + name + ")"
				}
			}
			switch path, name := pkgSel(n.Fun); {
			case path == "net/http" && slices.Contains([]string{"Get", "Head", "Post", "PostForm"}, name):
				what = "http." + name
			case path == "golang.org/x/oauth2" && name == "NewClient":
				what = "oauth2.NewClient"
			}
		case *ast.SelectorExpr:
			if path, name := pkgSel(n); path == "net/http" && (name == "DefaultClient" || name == "DefaultTransport") {
				what = "http." + name
			}
		}
		if what != "" {
			out = append(out, finding{fset.Position(n.Pos()).String(), what})
		}
		return true
	})
	return out
}
