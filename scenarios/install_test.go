package scenarios

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// installWait bounds the go command's install: on a fresh machine it
// compiles every dependency for CGO_ENABLED=0 first.
const installWait = 5 * time.Minute

// The README's `go install …/cmd/majordomus-mcp@<version>`, run as it is
// written, installs a binary that names the version, from a module proxy
// made of this tree: the module path has a host, and the zip holds what
// git tracks of the module (nested modules left out, as the go command's
// zips leave them). Nothing is asked of GitHub: the module comes from the
// proxy directory, its dependencies from the module cache or the
// machine's own proxy, verified as for any install at a version (against
// the checksum database, or what the module cache has of it: an install
// at a version reads no go.sum), the module itself excepted, which the
// database has never seen. The version is new on every run (the module
// cache never fetches a version twice), and what the install added to
// the module cache is removed at the end.
func TestTheREADMEsGoInstallWorksFromAModuleProxy(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	module := modulePath(t, root)
	version := fmt.Sprintf("v0.0.0-proxy.%d", time.Now().UnixNano())
	env, args := readmeGoInstall(t, root)
	if want := module + "/cmd/majordomus-mcp@<version>"; args[len(args)-1] != want {
		t.Fatalf("the README installs %s; go.mod says the command is %s", args[len(args)-1], want)
	}
	args[len(args)-1] = strings.Replace(args[len(args)-1], "<version>", version, 1)
	proxy := t.TempDir()
	writeModuleProxy(t, proxy, root, module, version)

	gobin := t.TempDir()
	env = append(append(os.Environ(), env...),
		"GOPROXY="+(&url.URL{Scheme: "file", Path: filepath.ToSlash(proxy)}).String()+","+goEnv(t, "GOPROXY"),
		"GONOSUMDB="+module, // the checksum database has never seen this version
		"GONOPROXY=", "GOPRIVATE=", "GOWORK=off",
		"GOFLAGS=-mod=mod", "GOBIN="+gobin)
	cache := goEnv(t, "GOMODCACHE")
	t.Cleanup(func() { forgetModuleVersion(t, filepath.Clean(cache), module, version) })
	c, cancel := context.WithTimeout(context.Background(), installWait)
	defer cancel()
	install := exec.CommandContext(c, args[0], args[1:]...)
	install.Dir, install.Env = t.TempDir(), env // outside the module: nothing of the tree but the proxy
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}

	out, err := exec.Command(filepath.Join(gobin, "majordomus-mcp"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "majordomus-mcp ") || !strings.Contains(string(out), version) {
		t.Fatalf("the installed binary's version says %q (%v); want it to name %s", out, err, version)
	}
}

// modulePath is what root's go.mod names its module.
func modulePath(t *testing.T, root string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}

// goInstallSpan is a command in backquotes that installs at <version>.
var goInstallSpan = regexp.MustCompile("`([^`]*go install [^`]*@<version>)`")

// readmeGoInstall is the README's go install command: the variables it
// sets, and its words.
func readmeGoInstall(t *testing.T, root string) (env, args []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := goInstallSpan.FindSubmatch(raw)
	if m == nil {
		t.Fatal("the README says no `go install …@<version>`")
	}
	words := strings.Fields(string(m[1]))
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env, words = append(env, words[0]), words[1:]
	}
	if len(words) != 3 || words[0] != "go" || words[1] != "install" {
		t.Fatalf("the README's command %q is not `go install <package>@<version>`", m[1])
	}
	return env, words
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// writeModuleProxy lays out, in dir, a module proxy serving module at
// version from the files git tracks in root: @v/list, .info, .mod, and
// the .zip whose every name starts with module@version/.
func writeModuleProxy(t *testing.T, dir, root, module, version string) {
	t.Helper()
	at := filepath.Join(dir, filepath.FromSlash(escapeModulePath(module)), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": []byte(info), version + ".mod": goMod} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for _, name := range moduleFiles(t, root) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(module + "@" + version + "/" + name)
		if err == nil {
			_, err = w.Write(data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(at, version+".zip"), zipped.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// moduleFiles are the regular files git tracks in root, slash-separated,
// but for those of a nested module (a directory with a go.mod of its own,
// such as tools/), which the go command refuses in a module's zip.
func moduleFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	tracked := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var nested []string
	for _, name := range tracked {
		if path.Base(name) == "go.mod" && name != "go.mod" {
			nested = append(nested, path.Dir(name)+"/")
		}
	}
	var files []string
	for _, name := range tracked {
		if slices.ContainsFunc(nested, func(dir string) bool { return strings.HasPrefix(name, dir) }) {
			continue
		}
		// a file deleted from the worktree, or a link, is not in the tree's module
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name))); err == nil && fi.Mode().IsRegular() {
			files = append(files, name)
		}
	}
	return files
}

// escapeModulePath is the module path as the module cache and proxies
// spell it: each capital letter as ! and the letter.
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// forgetModuleVersion removes from the module cache what fetching module
// at version put there, and nothing else: its extracted tree, its files in
// the download cache, the proxy's list when it names only this version,
// and the directories that leaves empty.
func forgetModuleVersion(t *testing.T, cache, module, version string) {
	t.Helper()
	escaped := filepath.FromSlash(escapeModulePath(module))
	if err := testtemp.RemoveAll(filepath.Join(cache, escaped+"@"+version)); err != nil {
		t.Errorf("removing the installed version from the module cache: %v", err)
	}
	at := filepath.Join(cache, "cache", "download", escaped, "@v")
	for _, ext := range []string{".info", ".mod", ".zip", ".ziphash", ".lock", ".partial"} {
		os.Remove(filepath.Join(at, version+ext))
	}
	if list, err := os.ReadFile(filepath.Join(at, "list")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(list))
		only := true
		for sc.Scan() {
			only = only && strings.TrimSpace(sc.Text()) == version
		}
		if only {
			os.Remove(filepath.Join(at, "list"))
		}
	}
	// os.Remove leaves a directory that still holds something
	for dir := at; dir != filepath.Join(cache, "cache", "download"); dir = filepath.Dir(dir) {
		os.Remove(dir)
	}
	for dir := filepath.Dir(filepath.Join(cache, escaped)); dir != cache; dir = filepath.Dir(dir) {
		os.Remove(dir)
	}
}
