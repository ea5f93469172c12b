package layer

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// repoRel is the indexed directory, relative to a checkout root.
const repoRel = ".ai/repo"

// maxObjectSize bounds the size of one object file.
const maxObjectSize = 8 << 20

// Index is an immutable snapshot of the layer. Build makes it; nothing
// changes it afterwards, so it may be shared between goroutines.
type Index struct {
	Root         string       // absolute checkout root
	Name         string       // the checkout's name: the manifest's (Config.Name), else filepath.Base(Root)
	RepositoryID string       // RepositoryID(Root)
	Generation   uint64       // 1 for the first index of a Layer, +1 per published change
	Objects      []Object     // sorted by URI
	Diagnostics  []Diagnostic // sorted by path, then message

	byURI  map[string]int // URI -> position in Objects
	docs   []searchDoc    // lower-cased search fields, aligned with Objects
	digest func() string  // Digest, worked out once, when first asked, for the copies Continue makes too
}

// RepositoryID returns the first 32 lowercase hex characters of the SHA-256
// of root, taken as given (callers pass the resolved root).
func RepositoryID(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:16])
}

// Build scans <root>/.ai/repo recursively and returns the index with the
// given generation, named after root's directory. Broken files become
// diagnostics, never errors; Build fails only when root itself is not a
// readable directory. It reads nothing outside .ai/repo (so never
// .ai/local) and writes nothing.
func Build(root string, generation uint64) (*Index, error) {
	ix, _, err := build(root, "", generation)
	return ix, err
}

// CheckoutName is what the checkout at root is called: the name its
// manifest gives (manifestName), else its directory's.
func CheckoutName(root, manifestName string) string {
	if name := strings.TrimSpace(manifestName); name != "" {
		return name
	}
	return filepath.Base(root)
}

// build is Build of a checkout named name ("" = after its directory), and
// also says what it read.
func build(root, name string, generation uint64) (*Index, sources, error) {
	var src sources
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, src, fmt.Errorf("building index: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, src, fmt.Errorf("building index: %w", err)
	} else if !fi.IsDir() {
		return nil, src, fmt.Errorf("building index: %s is not a directory", abs)
	}
	ix := &Index{Root: abs, Name: CheckoutName(abs, name), RepositoryID: RepositoryID(abs), Generation: generation}
	src.listedAt = time.Now()
	files, diags := listFiles(abs)
	src.listed, src.walk = files, slices.Clone(diags)
	results := parseAll(abs, files)
	src.files = make(map[string]stamp, len(files))
	for i := range results {
		if results[i].stamped {
			src.files[files[i]] = results[i].stamp
		}
	}

	// Files are in path order, so the first file by path keeps a URI.
	owner := make(map[string]string, len(files))
	kept := make([]*parsed, 0, len(files))
	for i := range results {
		r := &results[i]
		diags = append(diags, r.diags...)
		if !r.ok {
			continue
		}
		if first, dup := owner[r.obj.URI]; dup {
			diags = append(diags, Diagnostic{Level: LevelError, Path: r.obj.Path,
				Message: fmt.Sprintf("duplicate URI %s: already defined by %s", r.obj.URI, first)})
			continue
		}
		owner[r.obj.URI] = r.obj.Path
		kept = append(kept, r)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].obj.URI < kept[j].obj.URI })
	ix.Objects = make([]Object, len(kept))
	ix.docs = make([]searchDoc, len(kept))
	ix.byURI = make(map[string]int, len(kept))
	for i, r := range kept {
		ix.Objects[i], ix.docs[i] = r.obj, r.doc
		ix.byURI[r.obj.URI] = i
	}
	pack(ix.docs)
	slices.SortFunc(diags, func(a, b Diagnostic) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Message, b.Message), strings.Compare(a.Level, b.Level))
	})
	ix.Diagnostics = diags
	ix.digest = sync.OnceValue(ix.workDigest)
	return ix, src, nil
}

// parseAll reads and parses files in parallel; results keep the files' order.
func parseAll(root string, files []string) []parsed {
	results := make([]parsed, len(files))
	workers := min(runtime.GOMAXPROCS(0), len(files)/16+1)
	var taken atomic.Int64 // how many files the readers took: each reads the one it took
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := int(taken.Add(1)) - 1; k < len(files); k = int(taken.Add(1)) - 1 {
				results[k] = readObject(root, files[k])
			}
		})
	}
	wg.Wait()
	return results
}

// errNotRegular is a file that is a named pipe, a device or a directory.
var errNotRegular = errors.New("not a regular file")

// openRegular opens path to read it, refusing anything but a regular file
// without waiting on it (openToRead), and returns what it is.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := openToRead(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// readObject reads and parses one file.
func readObject(root, rel string) parsed {
	path := filepath.Join(root, filepath.FromSlash(rel))
	fail := func(msg string) parsed {
		return parsed{diags: []Diagnostic{{Level: LevelError, Path: rel, Message: msg}}}
	}
	f, st, err := openRegular(path)
	switch {
	case errors.Is(err, errNotRegular):
		// Replaced since it was listed: skipped, as listing it now would.
		return parsed{diags: []Diagnostic{{Level: LevelWarning, Path: rel, Message: "not a regular file: skipped"}}}
	case gone(err) && isLink(path):
		return parsed{diags: []Diagnostic{{Level: LevelWarning, Path: rel, Message: "symbolic link to no regular file: skipped"}}}
	case gone(err): // its directory too, or a file now
		return parsed{} // removed since it was listed: not there, as listing it now would say
	}
	if err != nil {
		return fail(fmt.Sprintf("cannot read: %v", pathErr(err)))
	}
	defer f.Close()
	stamp, stamped := stampOf(st)
	if st.Size() > maxObjectSize {
		r := fail(fmt.Sprintf("file is %d bytes, over the %d-byte limit: left out", st.Size(), maxObjectSize))
		r.stamp, r.stamped = stamp, stamped
		return r
	}
	data := make([]byte, st.Size())
	n, err := io.ReadFull(f, data)
	if err != nil && err != io.ErrUnexpectedEOF {
		return fail(fmt.Sprintf("cannot read: %v", pathErr(err)))
	}
	r := parseObject(rel, data[:n])
	if r.ok {
		r.doc = newSearchDoc(&r.obj)
	}
	r.stamp, r.stamped = stamp, stamped
	return r
}

// State is "degraded" when any diagnostic is an error, else "ok".
func (ix *Index) State() string {
	if ix.ErrorCount() > 0 {
		return "degraded"
	}
	return "ok"
}

// ErrorCount returns the number of error diagnostics.
func (ix *Index) ErrorCount() int {
	n := 0
	for _, d := range ix.Diagnostics {
		if d.Level == LevelError {
			n++
		}
	}
	return n
}

// Lookup returns the object with this URI. A URI without "@<version>" also
// finds the only object of that kind and id when exactly one exists.
func (ix *Index) Lookup(uri string) (Object, bool) {
	if ix.byURI == nil {
		ix = ix.withTables()
	}
	if i, ok := ix.byURI[uri]; ok {
		return ix.Objects[i], true
	}
	if !strings.HasPrefix(uri, URIScheme) || strings.Contains(uri, "@") {
		return Object{}, false
	}
	prefix := uri + "@"
	i := sort.Search(len(ix.Objects), func(i int) bool { return ix.Objects[i].URI >= prefix })
	if i < len(ix.Objects) && strings.HasPrefix(ix.Objects[i].URI, prefix) &&
		(i+1 == len(ix.Objects) || !strings.HasPrefix(ix.Objects[i+1].URI, prefix)) {
		return ix.Objects[i], true
	}
	return Object{}, false
}

// List returns the objects of this kind carrying this tag (compared without
// regard to case or composition, as Search compares), in URI order; ""
// matches any kind or tag.
func (ix *Index) List(kind, tag string) []Object {
	var out []Object
	tag = fold(tag)
	for _, o := range ix.Objects {
		if kind != "" && o.Kind != kind {
			continue
		}
		if tag != "" && !slices.ContainsFunc(o.Tags, func(t string) bool { return fold(t) == tag }) {
			continue
		}
		out = append(out, o)
	}
	return out
}

// Kinds returns the number of objects of each kind.
func (ix *Index) Kinds() map[string]int {
	out := make(map[string]int)
	for _, o := range ix.Objects {
		out[o.Kind]++
	}
	return out
}

// Digest is a hash of what the index serves, its generation aside: its
// name, objects and diagnostics. Two builds of the same files have the same
// digest.
func (ix *Index) Digest() string {
	if ix.digest == nil { // an index built by hand
		return ix.workDigest()
	}
	return ix.digest()
}

func (ix *Index) workDigest() string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s", len(s), s) }
	field(ix.Name)
	for i := range ix.Objects {
		o := &ix.Objects[i]
		field(o.URI)
		field(o.Path)
		field(o.Body)
		field(fmt.Sprintf("%#v", o.Front)) // maps printed in key order
		// what is read from it as the file writes it: 3.10, where Front has 3.1
		field(fmt.Sprintf("%q %q %q %q %#v", o.Title, o.Description, o.Status, o.Tags, o.Arguments))
	}
	for _, d := range ix.Diagnostics {
		field(d.String())
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Changed returns, sorted, the URIs added, removed, or whose content (front
// matter, what is read from it as the file writes it, body or path)
// differs between old and new. A nil index is empty.
func Changed(old, new *Index) []string {
	before := map[string]*Object{}
	if old != nil {
		for i := range old.Objects {
			before[old.Objects[i].URI] = &old.Objects[i]
		}
	}
	var out []string
	if new != nil {
		for i := range new.Objects {
			o := &new.Objects[i]
			if b, ok := before[o.URI]; !ok || !reflect.DeepEqual(*b, *o) { // 3.10 and 3.1 are one number in Front, not in Title
				out = append(out, o.URI)
			}
			delete(before, o.URI)
		}
	}
	out = slices.AppendSeq(out, maps.Keys(before))
	slices.Sort(out)
	return out
}

// withTables returns a copy of an index built by hand, with its lookup
// and search tables.
func (ix *Index) withTables() *Index {
	c := *ix
	c.byURI = make(map[string]int, len(c.Objects))
	c.docs = make([]searchDoc, len(c.Objects))
	for i := range c.Objects {
		c.byURI[c.Objects[i].URI] = i
		c.docs[i] = newSearchDoc(&c.Objects[i])
	}
	pack(c.docs)
	return &c
}

// relSlash returns p relative to root, slash-separated.
func relSlash(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

// pathErr strips the path from an *fs.PathError (messages name the file already).
func pathErr(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
