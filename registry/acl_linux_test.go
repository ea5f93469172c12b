package registry

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A checkout whose ACL lets another user write it (setfacl -m u:UID:rwx)
// is not trusted, though its group bits, the ACL's mask, look like those
// of a user-private group: the owner may set such an ACL, no root needed.
func TestACheckoutAnACLLetsAnotherUserWriteIsNotTrusted(t *testing.T) {
	repo := filepath.Join(testtemp.Dir(t), "repo")
	lease := Path(repo, "")
	if err := os.MkdirAll(filepath.Dir(lease), 0o700); err != nil {
		t.Fatal(err)
	}
	alone := func(gid, owner int) error { return nil } // every group private: only the ACL can refuse
	if err := trustedWith(lease, alone); err != nil {
		t.Fatalf("before the ACL: %v", err)
	}
	acl := binary.LittleEndian.AppendUint32(nil, 2) // version 2, then tag, permissions, id
	for _, e := range [][3]uint32{{0x01, 7, ^uint32(0)}, {0x02, 7, 54321}, {0x04, 5, ^uint32(0)}, {0x10, 7, ^uint32(0)}, {0x20, 5, ^uint32(0)}} {
		acl = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(acl, uint16(e[0])), uint16(e[1])), e[2])
	}
	if err := unix.Setxattr(repo, "system.posix_acl_access", acl, 0); err != nil {
		t.Fatalf("setting the ACL user:54321:rwx: %v", err)
	}
	if err := trustedWith(lease, alone); err == nil || !strings.Contains(err.Error(), repo+", on the way to the lease, may be writable by other users through its ACL") {
		t.Fatalf("Trusted = %v", err)
	}
}
