package proc

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// fakeProc builds a /proc tree: the socket tables and one directory per
// process, with the links the kernel would show.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T, tcp, tcp6 string) *fakeProc {
	t.Helper()
	f := &fakeProc{t: t, root: t.TempDir()}
	f.write("net/tcp", tcp)
	if tcp6 != "" {
		f.write("net/tcp6", tcp6)
	}
	return f
}

func (f *fakeProc) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) link(rel, target string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		f.t.Fatal(err)
	}
}

// process adds pid running exe, child of ppid, started at start, holding
// the given socket inodes.
func (f *fakeProc) process(pid, ppid int, start uint64, exe string, inodes ...string) {
	dir := strconv.Itoa(pid)
	f.link(dir+"/exe", exe)
	f.link(dir+"/cwd", "/work/checkout")
	f.write(dir+"/cmdline", "majordomus-mcp\x00serve\x00--profile\x00review\x00")
	// The command holds a space and a parenthesis, as a real one may.
	f.write(dir+"/stat", strconv.Itoa(pid)+" (majordomus (x)) S "+strconv.Itoa(ppid)+
		" 1 1 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 8 0 "+strconv.FormatUint(start, 10)+" 1000 100\n")
	if err := os.MkdirAll(filepath.Join(f.root, dir, "fd"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.link(dir+"/fd/0", "/dev/null")
	for i, inode := range inodes {
		f.link(dir+"/fd/"+strconv.Itoa(i+3), "socket:["+inode+"]")
	}
}

const tcpHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

func TestListeningFindsMajordomusServersOfThisUser(t *testing.T) {
	tcp := tcpHeader +
		"   0: 0100007F:2225 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0 100 0 0 10 0\n" + // 127.0.0.1:8741, listening
		"   1: 0100007F:2225 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 1002 1 0 100 0 0 10 0\n" + // established: not a listener
		"   2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1003 1 0 100 0 0 10 0\n" // 0.0.0.0:8080
	tcp6 := tcpHeader +
		"   0: 00000000000000000000000001000000:2226 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1004 1 0 100 0 0 10 0\n" // [::1]:8742
	f := newFakeProc(t, tcp, tcp6)
	f.process(100, 1, 5000, "/opt/bin/majordomus-mcp", "1001", "1002", "1004")
	f.process(101, 1, 5001, "/opt/bin/majordomus-mcp (deleted)", "1003") // replaced on disk since
	f.process(102, 1, 5002, "/usr/bin/python3", "1003")                  // another program
	f.process(103, 1, 5003, "/opt/bin/majordomus-mcp", "1002")           // a bridge: no listener
	f.link("104/exe", "/opt/bin/majordomus-mcp")                         // its fd table cannot be read
	f.write("104/fd", "not a directory")
	f.process(105, 1, 5005, "/opt/bin/majordomus-mcp", "1003") // exiting (PF_EXITING): gone, not uninspectable
	f.write("105/stat", "105 (majordomus-mcp) S 1 1 1 0 -1 4194564 100 0 0 0 1 1 0 0 20 0 8 0 5005 1000 100\n")
	f.process(106, 1, 5006, "/opt/bin/majordomus-mcp", "1003") // stopped by SIGSTOP
	f.write("106/stat", "106 (majordomus-mcp) T 1 1 1 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 8 0 5006 1000 100\n")
	f.process(107, 1, 5007, "/opt/bin/majordomus-mcp", "1003") // stopped by a debugger
	f.write("107/stat", "107 (majordomus-mcp) t 1 1 1 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 8 0 5007 1000 100\n")
	f.write("self/stat", "not a process")

	got, err := ProcScan{Root: f.root, Names: []string{"majordomus-mcp"}}.Listening(os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	want := Listening{
		Processes: []ListeningProcess{
			{PID: 100, PPID: 1, Start: 5000, Executable: "/opt/bin/majordomus-mcp", Listen: []string{"127.0.0.1:8741", "[::1]:8742"},
				Args: []string{"majordomus-mcp", "serve", "--profile", "review"}, Cwd: "/work/checkout"},
			{PID: 101, PPID: 1, Start: 5001, Executable: "/opt/bin/majordomus-mcp (deleted)", Listen: []string{"0.0.0.0:8080"},
				Args: []string{"majordomus-mcp", "serve", "--profile", "review"}, Cwd: "/work/checkout"},
			{PID: 106, PPID: 1, Start: 5006, Executable: "/opt/bin/majordomus-mcp", Listen: []string{"0.0.0.0:8080"},
				Args: []string{"majordomus-mcp", "serve", "--profile", "review"}, Cwd: "/work/checkout", Stopped: true},
			{PID: 107, PPID: 1, Start: 5007, Executable: "/opt/bin/majordomus-mcp", Listen: []string{"0.0.0.0:8080"},
				Args: []string{"majordomus-mcp", "serve", "--profile", "review"}, Cwd: "/work/checkout", Stopped: true},
		},
		Uninspectable: []int{104},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Listening:\n got %+v\nwant %+v", got, want)
	}

	none, err := ProcScan{Root: f.root, Names: []string{"majordomus-mcp"}}.Listening(os.Geteuid() + 1)
	if err != nil || len(none.Processes) != 0 {
		t.Fatalf("another user's view: %+v %v, want nothing", none, err)
	}
}

func TestListeningWithoutSocketTablesIsUnavailable(t *testing.T) {
	_, err := ProcScan{Root: t.TempDir(), Names: []string{"majordomus-mcp"}}.Listening(os.Geteuid())
	if err == nil {
		t.Fatal("a /proc without net/tcp gave a listing")
	}
}

// A majordomus-mcp whose user may run its executable but not read it is
// not dumpable: the kernel hides its executable and its sockets even from
// that user. It is uninspectable, not another program, or the fleet would
// miss a server that runs.
func TestListeningCallsANotDumpableServerUninspectable(t *testing.T) {
	dir := testtemp.Dir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	scanner := testchild.Copy(t, filepath.Join(dir, "scanner"), 0o755)
	server := testchild.Copy(t, filepath.Join(dir, "majordomus-mcp"), 0o111)
	asUser := func(exe string) *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		if os.Geteuid() == 0 { // root reads any executable: run as nobody
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		return cmd
	}
	s := testchild.StartCmd(t, asUser(server), "listen")
	s.Expect(t, "ready")
	c := testchild.StartCmd(t, asUser(scanner), "scan")
	var got Listening
	if err := json.Unmarshal([]byte(c.Line(t)), &got); err != nil {
		t.Fatal(err)
	}
	if pid := s.Cmd.Process.Pid; !slices.Contains(got.Uninspectable, pid) {
		t.Errorf("the not-dumpable server %d is not uninspectable: %+v", pid, got)
	}
}
