package conventions_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

// maxPackageLines caps the lines of a package's non-test files: a package
// past it is doing two jobs and asks to be split along a seam.
const maxPackageLines = 2000

// largePackages are the packages already past maxPackageLines, each held
// to a ceiling a little above its size so it can only shrink until split:
// server (assembly, MCP wiring, the call path, the fast path, the approval
// executor), upstream (sessions, relay,
// discovery, pinning, health), the benchmark's fixtures and the soak that
// shares them (to split: a harness package both commands import). Lower
// a ceiling when a package shrinks; remove it once under the cap.
var largePackages = map[string]int{
	"server":           3200,
	"upstream":         3200,
	"cmd/legate-bench": 3100,
}

// maxMethods caps a type's method set, exported and unexported: a type
// with more is doing several jobs.
const maxMethods = 40

// largeTypes are the types already past maxMethods, each held to a
// ceiling as largePackages are: upstream.Upstream (session, relay,
// discovery, circuit and health of one upstream).
var largeTypes = map[string]int{
	"upstream.Upstream": 44,
}

func TestPackageSize(t *testing.T) {
	for _, p := range listPackages(t) {
		n := 0
		for _, f := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			n += bytes.Count(b, []byte("\n"))
		}
		name := rel(p.ImportPath)
		limit, large := largePackages[name]
		switch {
		case !large && n > maxPackageLines:
			t.Errorf("%s has %d lines of code, more than %d: split it along a seam", name, n, maxPackageLines)
		case large && n > limit:
			t.Errorf("%s has %d lines of code, more than its ceiling of %d: split it instead of raising the ceiling", name, n, limit)
		case large && n <= maxPackageLines:
			t.Errorf("%s has %d lines, within the cap of %d: remove it from largePackages", name, n, maxPackageLines)
		}
	}
}

func TestMethodSetSize(t *testing.T) {
	for _, p := range listPackages(t) {
		methods := map[string]int{}
		fset := token.NewFileSet()
		for _, f := range p.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && len(fn.Recv.List) == 1 {
					methods[receiverType(fn.Recv.List[0].Type)]++
				}
			}
		}
		for typ, n := range methods {
			name := rel(p.ImportPath) + "." + typ
			limit, large := largeTypes[name]
			switch {
			case !large && n > maxMethods:
				t.Errorf("%s has %d methods, more than %d: give some of its jobs a type of their own", name, n, maxMethods)
			case large && n > limit:
				t.Errorf("%s has %d methods, more than its ceiling of %d: split it instead of raising the ceiling", name, n, limit)
			case large && n <= maxMethods:
				t.Errorf("%s has %d methods, within the cap of %d: remove it from largeTypes", name, n, maxMethods)
			}
		}
	}
}

// receiverType is the name of a method's receiver type, without pointer
// or type parameters.
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}
