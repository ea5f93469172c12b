package scenarios

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// A client that writes a request before its initialize, while the lease's
// owner binds (the election waits), is answered what every mode answers
// it — -32600, initialize first — never served as if its later initialize
// had come first: the initialize is answered early, and the request that
// waited for the election must not then run in the session it opened.
// R8 and §14: the same answers whichever mode serves the client.
func TestARequestBeforeInitializeIsRefusedWhileTheElectionWaits(t *testing.T) {
	// A batch holding an initialize is refused (-32600: initialize comes
	// alone) and opens no session in any mode: after it, the same holds.
	refusedBatch := `[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"early","version":"1"}}}]` + "\n"
	for name, before := range map[string]string{"first": "", "after a refused batch": refusedBatch} {
		t.Run(name, func(t *testing.T) {
			dir := checkout(t)
			root, _ := filepath.EvalSymlinks(dir)
			sum := sha256.Sum256([]byte(root))
			// The test process plays an owner that has not bound yet: the lease is
			// binding, and the election waits for it.
			doc := map[string]any{
				"schema": "majordomus-mcp-lease/v1", "pid": os.Getpid(), "instance": "test-owner", "root": root,
				"repository_id": hex.EncodeToString(sum[:])[:32], "url": nil, "boot_id": bootID(t), "process_start": processStart(t),
				"secret": secret.New(), "started_at": time.Now().UTC().Format(time.RFC3339Nano),
			}
			raw, _ := json.Marshal(doc)
			plantLease(t, dir, string(raw), 0)

			p := shared(t, dir)
			if _, err := p.WaitLog(ctx(t), "waiting for the lease's owner"); err != nil {
				t.Fatal(err)
			}
			call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"majordomus_peers","arguments":{}}}`
			init := `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"early","version":"1"}}}`
			if err := p.SendLine(before + call + "\n" + init); err != nil {
				t.Fatal(err)
			}
			idIs := func(id string) func([]byte) bool {
				return func(f []byte) bool { return bytes.Contains(f, []byte(`"id":`+id+`,`)) }
			}
			if _, err := p.WaitFrame(ctx(t), "the initialize's answer", idIs("2")); err != nil {
				t.Fatal(err)
			}
			// The owner goes away: the election takes the lease, and the request
			// that waited for it is answered.
			os.Remove(leasePath(dir))
			answer, err := p.WaitFrame(ctx(t), "the early request's answer", idIs("1"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(answer), `"code":-32600`) || !strings.Contains(string(answer), "before initialize") {
				t.Fatalf("a tools/call written before initialize was answered %s; every other mode (standalone, attached, alone, a running leaseholder) answers -32600 \"tools/call before initialize\"", answer)
			}
		})
	}
}
