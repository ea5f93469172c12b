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
// of a user-private group; one whose ACL lets another user only read it
// (setfacl -m u:UID:rx), its own group writing, is. The owner may set an
// ACL: no root needed.
func TestAnACLLettingAnotherUserWriteIsNotTrusted(t *testing.T) {
	const anyone = ^uint32(0)
	for _, tc := range []struct {
		name   string
		named  uint32 // the permissions of user 54321
		refuse bool
	}{
		{"user:54321:rwx", 7, true},
		{"user:54321:r-x", 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := filepath.Join(testtemp.Dir(t), "repo")
			lease := Path(repo, "")
			if err := os.MkdirAll(filepath.Dir(lease), 0o700); err != nil {
				t.Fatal(err)
			}
			alone := func(gid, owner int) error { return nil } // every group private: only the ACL can refuse
			acl := binary.LittleEndian.AppendUint32(nil, 2)    // version 2, then tag, permissions, id
			for _, e := range [][3]uint32{{0x01, 7, anyone}, {0x02, tc.named, 54321}, {0x04, 7, anyone}, {0x10, 7, anyone}, {0x20, 5, anyone}} {
				acl = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(acl, uint16(e[0])), uint16(e[1])), e[2])
			}
			if err := unix.Setxattr(repo, "system.posix_acl_access", acl, 0); err != nil {
				t.Fatalf("setting the ACL: %v", err)
			}
			err := trustedWith(lease, alone)
			if refused := err != nil && strings.Contains(err.Error(), repo+", on the way to the lease, is writable by other users through its ACL (user 54321)"); refused != tc.refuse || !tc.refuse && err != nil {
				t.Fatalf("Trusted = %v", err)
			}
		})
	}
}
