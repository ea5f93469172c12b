package release

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"runtime/debug"
)

// Revision is the code a server started from, as the fleet registry
// records it: the module version and the VCS revision when the build
// stamped them, and the Go build ID otherwise (builds made with
// -buildvcs=false, as this project's tests and CI are, carry no VCS
// revision, but every build carries its build ID, which changes with the
// code).
type Revision struct {
	Startup       string // "" when nothing identifies the code
	ModuleVersion string
	VCSRevision   string
}

// StartupRevision identifies this binary's code: release+<VCS revision>
// (".dirty.<build>" appended when the tree was modified, since a modified
// tree's revision does not identify its code), else release+<module
// version> for a released module, else release+build.<build>. The build
// part is the first 12 hex digits of SHA-256 of the Go build ID.
func StartupRevision() Revision {
	var r Revision
	var vcs, modified string
	if info, ok := debug.ReadBuildInfo(); ok {
		r.ModuleVersion = info.Main.Version
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				vcs = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	r.VCSRevision = vcs
	build := BuildDigest()
	switch {
	case vcs != "" && modified == "true" && build != "":
		r.Startup = Number + "+" + vcs + ".dirty." + build
	case vcs != "" && modified != "true":
		r.Startup = Number + "+" + vcs
	case r.ModuleVersion != "" && r.ModuleVersion != "(devel)":
		r.Startup = Number + "+" + r.ModuleVersion
	case build != "":
		r.Startup = Number + "+build." + build
	}
	return r
}

// BuildDigest returns the first 12 hex digits of SHA-256 of this
// executable's Go build ID (its ELF note "Go", type 4), or "": the code it
// runs, though its file was replaced since (runningImage).
func BuildDigest() string {
	exe, err := runningImage()
	if err != nil {
		return ""
	}
	id := buildIDOf(exe)
	if id == nil {
		return ""
	}
	sum := sha256.Sum256(id)
	return hex.EncodeToString(sum[:6])
}

// buildIDOf reads the Go build ID of the executable at path: an ELF note
// (Linux), or the text the linker puts first in the code of a Mach-O or PE
// file (macOS, Windows).
func buildIDOf(path string) []byte {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		s := f.Section(".note.go.buildid")
		if s == nil {
			return nil
		}
		note, err := s.Data()
		if err != nil {
			return nil
		}
		return goBuildID(note, f.ByteOrder)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, buildIDSearch)
	n, _ := io.ReadFull(f, head)
	return goBuildIDText(head[:n])
}

// buildIDSearch is how much of a Mach-O or PE executable is searched for
// the build ID: the code starts within its first pages.
const buildIDSearch = 64 << 10

// goBuildIDText extracts the Go build ID from the start of a Mach-O or PE
// executable, where the linker writes \xff Go build ID: "<id>"\n \xff.
func goBuildIDText(head []byte) []byte {
	const prefix, suffix = "\xff Go build ID: \"", "\"\n \xff"
	_, rest, ok := bytes.Cut(head, []byte(prefix))
	if !ok {
		return nil
	}
	j := bytes.Index(rest, []byte(suffix))
	if j <= 0 {
		return nil
	}
	return rest[:j]
}

// goBuildID extracts the descriptor of an ELF note named "Go" of type 4
// (the Go build ID): namesz, descsz, type, then the name and the
// descriptor, each padded to 4 bytes.
func goBuildID(note []byte, order binary.ByteOrder) []byte {
	if len(note) < 16 {
		return nil
	}
	namesz, descsz, typ := order.Uint32(note), order.Uint32(note[4:]), order.Uint32(note[8:])
	name := note[12:]
	if typ != 4 || namesz != 4 || uint32(len(name)) < 4+descsz || !bytes.Equal(name[:4], []byte("Go\x00\x00")) {
		return nil
	}
	return name[4 : 4+descsz]
}
