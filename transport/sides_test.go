package transport

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// sideOf is the side a file of this package belongs to; "" is shared.
func sideOf(file string) string {
	for _, side := range []string{"stdio_", "server_", "bridge"} {
		if strings.HasPrefix(file, side) {
			return strings.TrimSuffix(side, "_")
		}
	}
	return ""
}

// The stdio loop, the HTTP server and the bridge use one another only
// through exported names and the shared files (doc.go, "Files, by side").
func TestTheSidesShareOnlyExportedNames(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	declaredIn := map[string]string{} // unexported package-level name → its side
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		for _, d := range f.Decls {
			for _, id := range declaredNames(d) {
				if !ast.IsExported(id) && id != "_" {
					declaredIn[id] = sideOf(name)
				}
			}
		}
	}
	if len(files) < 10 || len(declaredIn) < 20 {
		t.Fatalf("read %d files declaring %d unexported names: the test reads the wrong directory", len(files), len(declaredIn))
	}
	for name, f := range files {
		side := sideOf(name)
		if side == "" {
			continue
		}
		skip := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				skip[x.Sel] = true // a field or a method, not a package-level name
			case *ast.KeyValueExpr:
				if id, ok := x.Key.(*ast.Ident); ok {
					skip[id] = true // a field name in a composite literal
				}
			case *ast.Ident:
				// Unresolved within its file: a package-level name of
				// another file (or a predeclared one).
				if x.Obj == nil && !skip[x] {
					if other, ok := declaredIn[x.Name]; ok && other != "" && other != side {
						t.Errorf("%s (%s side) uses %s of the %s side: export it, or move it to a shared file", fset.Position(x.Pos()), side, x.Name, other)
					}
				}
			}
			return true
		})
	}
}

// declaredNames are the package-level names d declares (a method declares
// none).
func declaredNames(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			out = append(out, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			}
		}
	}
	return out
}
