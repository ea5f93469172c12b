//go:build unix && !linux

package scenarios

import (
	"context"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// stop sends SIGSTOP to p, a leaseholder, and returns once its server
// stops answering its probe (this system has no waitid(WNOWAIT)). p is
// continued at the test's end, if nothing continued it before.
func stop(t *testing.T, p *mcpclient.Process) {
	t.Helper()
	t.Cleanup(func() { p.Signal(syscall.SIGCONT) })
	url := serverURL(t, p)
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err != nil {
			return
		}
		resp.Body.Close()
	}
}
