package layer

import (
	"path/filepath"
	"runtime"
	"testing"
)

// Where names ignore their case (macOS's APFS as it comes, NTFS), .ai/local
// written in another case is .ai/local, and what a link leads to there is
// never indexed. (macOS's filepath.EvalSymlinks keeps the case a link
// wrote: a link to ../LOCAL/secret.md, or .ai/repo linked to ../.AI,
// served the private half's notes to every agent.) Elsewhere they are
// other directories; and a name that only begins as local's does is
// never under it.
func TestTheLocalHalfInAnotherCaseIsTheLocalHalf(t *testing.T) {
	ignoreCase := runtime.GOOS == "darwin" || runtime.GOOS == "windows"
	checkout := filepath.Join(string(filepath.Separator)+"home", "u", "checkout")
	ai := filepath.Join(checkout, ".ai")
	local, repo := filepath.Join(ai, "local"), filepath.Join(ai, "repo")
	for _, p := range []string{filepath.Join(ai, "LOCAL"), filepath.Join(ai, "Local", "secret.md")} {
		if got := under(p, local); got != ignoreCase {
			t.Errorf("under(%s, %s) = %v on %s", p, local, got, runtime.GOOS)
		}
	}
	if got := reachesLocal(repo, filepath.Join(checkout, ".AI"), filepath.Join(repo, "local"), local); got != ignoreCase {
		t.Errorf(".ai/repo linked to .AI reaches .ai/local: %v on %s", got, runtime.GOOS)
	}
	for _, p := range []string{filepath.Join(ai, "LOCALS"), filepath.Join(ai, "locals", "a.md"), ai} {
		if under(p, local) {
			t.Errorf("under(%s, %s) on %s", p, local, runtime.GOOS)
		}
	}
	if !under(local, local) || !under(filepath.Join(local, "s.md"), local) {
		t.Error("local itself, or a file in it, is not under it")
	}
}
