package node

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// The client's session has one owner: no production file but its own
// (client.go, client_carry.go) touches its state (its mutex and what it
// guards; its greeting keeps its own, under its own mutex, in greeting.go,
// and its notices theirs, in notices.go),
// and none but those and router.go changes what the router gives messages to. The package is
// type-checked without its imports, so that a field or method is known by
// its type, not by its name.
func TestOnlyTheClientSessionTouchesItsState(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if !strings.HasSuffix(p, "_test.go") {
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: noImports{}, Error: func(error) {}}
	pkg, _ := conf.Check("node", fset, files, info)

	owned := map[types.Object]string{} // the session's state and the router's writers, by who may touch them
	session := pkg.Scope().Lookup("clientSession").Type().Underlying().(*types.Struct)
	for i := range session.NumFields() {
		if f := session.Field(i); !map[string]bool{"n": true, "router": true, "elections": true, "patience": true, "greeting": true, "notices": true}[f.Name()] {
			owned[f] = "client.go client_carry.go"
		}
	}
	router := types.NewPointer(pkg.Scope().Lookup("router").Type())
	for _, name := range []string{"set", "hold", "failed", "retire", "holdFrom", "offer", "update"} {
		m, _, _ := types.LookupFieldOrMethod(router, false, pkg, name)
		owned[m] = "client.go client_carry.go router.go"
	}
	if len(owned) < 12 {
		t.Fatalf("found %d things to guard: the search is wrong", len(owned))
	}
	uses := 0
	for sel, s := range info.Selections {
		may, ok := owned[s.Obj()]
		if !ok {
			continue
		}
		uses++
		if pos := fset.Position(sel.Sel.Pos()); !strings.Contains(may, filepath.Base(pos.Filename)) {
			t.Errorf("%s: %s is touched only in %s: it is the client session's", pos, sel.Sel.Name, may)
		}
	}
	if uses < 20 {
		t.Fatalf("found %d uses: the search is wrong", uses)
	}
}

// noImports leaves every import unread: what the test asks is answered
// within the package.
type noImports struct{}

func (noImports) Import(string) (*types.Package, error) { return nil, errors.New("not read") }
