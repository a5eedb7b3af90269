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
// past it is doing two jobs and asks to be split along a seam. Neither
// cap has exemptions: a package or type past one is split, whatever it is.
const maxPackageLines = 2000

// maxMethods caps a type's method set, exported and unexported: a type
// with more is doing several jobs.
const maxMethods = 30

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
		if n > maxPackageLines {
			t.Errorf("%s has %d lines of code, more than %d: split it along a seam", rel(p.ImportPath), n, maxPackageLines)
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
			if n > maxMethods {
				t.Errorf("%s.%s has %d methods, more than %d: give some of its jobs a type of their own", rel(p.ImportPath), typ, n, maxMethods)
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
