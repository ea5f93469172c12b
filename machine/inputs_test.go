package machine

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every trigger the graph shows can fire in the binary: the machine fires
// it itself (an attempt's result, a timer, the server's start, an action's
// follow-up), or an input method posts it and code outside the tests calls
// that method. An input method nobody calls draws edges the binary never
// takes, as the idle-timeout trigger once did.
func TestEveryInputMethodIsCalled(t *testing.T) {
	fset := token.NewFileSet()
	files := machineFiles(t, fset)
	consts := triggerConsts(files)
	inputs := inputMethods(fset, files, consts)
	fired := firedWithin(files, consts)

	b := newBuilder(Electing)
	configure(b)
	shown := map[Trigger]bool{}
	for _, e := range b.model.Edges {
		shown[e.Trigger] = true
	}
	for tr := range shown {
		if !fired[tr] && !slices.ContainsFunc(inputs, func(in input) bool { return in.trigger == tr }) {
			t.Errorf("the graph shows %s, which neither the machine fires nor an input method posts", tr)
		}
	}
	if len(inputs) < 6 {
		t.Fatalf("found %d input methods: the search is wrong", len(inputs))
	}

	callers := callersOf(t, inputs)
	for _, in := range inputs {
		switch {
		case !shown[in.trigger]:
			t.Errorf("Machine.%s posts %s, which no edge of the graph handles", in.name, in.trigger)
		case len(callers[in.name]) == 0:
			t.Errorf("Machine.%s (%s) has no caller outside the tests: the graph's %s edges never fire", in.name, in.trigger, in.trigger)
		default:
			t.Logf("Machine.%s (%s) is called from %v", in.name, in.trigger, callers[in.name])
		}
	}
}

// input is an input method: an exported method of Machine that posts a
// trigger to the loop, itself or through another input method.
type input struct {
	name     string
	trigger  Trigger
	file     string // where its body is: file name and offsets
	from, to int
}

// machineFiles parses the package's own non-test files.
func machineFiles(t *testing.T, fset *token.FileSet) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// inputMethods finds the methods of *Machine whose body posts an event
// (m.inbox.post(event{trigger: T})) or calls one that does.
func inputMethods(fset *token.FileSet, files []*ast.File, consts map[string]Trigger) []input {
	methods := map[string]*ast.FuncDecl{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && fd.Recv != nil && fd.Name.IsExported() && receiverIs(fd, "Machine") {
				methods[fd.Name.Name] = fd
			}
		}
	}
	var trigger func(fd *ast.FuncDecl, seen map[string]bool) (Trigger, bool)
	trigger = func(fd *ast.FuncDecl, seen map[string]bool) (found Trigger, ok bool) {
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, isCall := n.(*ast.CallExpr)
			if !isCall || ok {
				return !ok
			}
			sel, isSel := call.Fun.(*ast.SelectorExpr)
			if !isSel {
				return true
			}
			if inner, isInbox := sel.X.(*ast.SelectorExpr); isInbox && inner.Sel.Name == "inbox" && sel.Sel.Name == "post" && len(call.Args) == 1 {
				found, ok = eventTrigger(call.Args[0], consts)
				return false
			}
			if other := methods[sel.Sel.Name]; other != nil && !seen[sel.Sel.Name] {
				seen[sel.Sel.Name] = true
				found, ok = trigger(other, seen)
			}
			return !ok
		})
		return found, ok
	}
	var out []input
	for name, fd := range methods {
		if tr, ok := trigger(fd, map[string]bool{name: true}); ok {
			from, to := fset.Position(fd.Body.Pos()), fset.Position(fd.Body.End())
			out = append(out, input{name: name, trigger: tr, file: filepath.Base(from.Filename), from: from.Offset, to: to.Offset})
		}
	}
	slices.SortFunc(out, func(a, b input) int { return strings.Compare(a.name, b.name) })
	return out
}

func receiverIs(fd *ast.FuncDecl, name string) bool {
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.Name == name
}

// eventTrigger reads T from event{trigger: T}.
func eventTrigger(e ast.Expr, consts map[string]Trigger) (Trigger, bool) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "trigger" {
			return triggerNamed(kv.Value, consts)
		}
	}
	return "", false
}

// triggerConsts maps the name of each string constant of the package to
// its value, as a Trigger.
func triggerConsts(files []*ast.File) map[string]Trigger {
	consts := map[string]Trigger{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						break
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if v, err := strconv.Unquote(lit.Value); err == nil {
							consts[n.Name] = Trigger(v)
						}
					}
				}
			}
		}
	}
	return consts
}

// triggerNamed resolves a constant's identifier to its value.
func triggerNamed(e ast.Expr, consts map[string]Trigger) (Trigger, bool) {
	id, ok := e.(*ast.Ident)
	if !ok {
		return "", false
	}
	tr, ok := consts[id.Name]
	return tr, ok
}

// firedWithin is every trigger the machine fires itself: fire(ctx, T)
// with a constant T, and the classes' triggers, which
// TriggerFor fires for an attempt's result.
func firedWithin(files []*ast.File, consts map[string]Trigger) map[Trigger]bool {
	fired := map[Trigger]bool{}
	for _, c := range Classes {
		t, _ := TriggerFor(Observation{Class: c})
		fired[t] = true
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "fire" {
				if tr, ok := triggerNamed(call.Args[1], consts); ok {
					fired[tr] = true
				}
			}
			return true
		})
	}
	return fired
}

// callersOf finds, for each input method, the places outside the tests
// that use it (a call or a method value), other than the bodies of input
// methods, which only pass a fact on. It type-checks the machine's
// non-test files, then every other directory's, with machine as their only
// import the checker can read: that is enough to tell a call of
// Machine.ClientLeft from one of Node.ClientLeft, and the errors of the
// other imports, which it cannot read, are ignored.
func callersOf(t *testing.T, inputs []input) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	dirs := map[string][]*ast.File{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (d.Name() == "testdata" || d.Name() == "tools" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	names := map[string]bool{}
	for _, in := range inputs {
		names[in.name] = true
	}
	callers := map[string][]string{}
	record := func(pkg string, info *types.Info) {
		for id, obj := range info.Uses {
			fn, ok := obj.(*types.Func)
			if !ok || !names[fn.Name()] || !isMachineMethod(fn) {
				continue
			}
			if pkg == modulePath+"/machine" && insideInput(fset, id.Pos(), inputs) {
				continue
			}
			pos := fset.Position(id.Pos())
			rel, _ := filepath.Rel(root, pos.Filename)
			callers[fn.Name()] = append(callers[fn.Name()], filepath.ToSlash(rel)+":"+strconv.Itoa(pos.Line))
		}
	}
	check := func(path string, files []*ast.File, imp types.Importer) (*types.Package, *types.Info) {
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		conf := &types.Config{Importer: imp, Error: func(error) {}}
		pkg, _ := conf.Check(path, fset, files, info)
		return pkg, info
	}

	machineDir := filepath.Join(root, "machine")
	mpkg, info := check(modulePath+"/machine", dirs[machineDir], importerFunc(func(string) (*types.Package, error) {
		return nil, errUnread
	}))
	if mpkg.Scope().Lookup("Machine") == nil {
		t.Fatal("type-checking machine found no Machine")
	}
	record(mpkg.Path(), info)
	for dir, files := range dirs {
		if dir == machineDir {
			continue
		}
		rel, _ := filepath.Rel(root, dir)
		path := modulePath + "/" + filepath.ToSlash(rel)
		_, info := check(path, files, importerFunc(func(p string) (*types.Package, error) {
			if p == mpkg.Path() {
				return mpkg, nil
			}
			return nil, errUnread
		}))
		record(path, info)
	}
	for _, c := range callers {
		slices.Sort(c)
	}
	return callers
}

// errUnread is what the test's importer says of every package but machine.
var errUnread = errors.New("not read by this test")

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

const modulePath = "github.com/majordomus-mcp/majordomus-mcp"

// isMachineMethod reports whether fn is a method of machine.Machine.
func isMachineMethod(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return false
	}
	recv := sig.Recv().Type()
	if ptr, ok := recv.(*types.Pointer); ok {
		recv = ptr.Elem()
	}
	named, ok := recv.(*types.Named)
	return ok && named.Obj().Name() == "Machine" && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == modulePath+"/machine"
}

// insideInput reports whether pos lies in the body of an input method.
// The machine's files were parsed again into fset, so positions are
// compared by file name and offset.
func insideInput(fset *token.FileSet, pos token.Pos, inputs []input) bool {
	at := fset.Position(pos)
	for _, in := range inputs {
		if base := filepath.Base(at.Filename); base == in.file && at.Offset >= in.from && at.Offset < in.to {
			return true
		}
	}
	return false
}
