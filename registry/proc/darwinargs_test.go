package proc

import (
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// procArgs2 builds a kern.procargs2 buffer as macOS lays it out: argc in
// host byte order, the executable path, NUL padding, the arguments, the
// environment.
func procArgs2(argc int32, exe, padding string, strs ...string) []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(argc))
	b = append(b, exe...)
	b = append(b, 0)
	b = append(b, padding...)
	for _, s := range strs {
		b = append(b, s...)
		b = append(b, 0)
	}
	return b
}

func TestParseProcArgs2(t *testing.T) {
	env := []string{"HOME=/Users/dev", "PATH=/usr/bin:/bin"}
	tests := []struct {
		name    string
		in      []byte
		exe     string
		args    []string
		wantErr bool
	}{
		{name: "normal",
			in:  procArgs2(4, "/opt/bin/majordomus-mcp", "\x00\x00\x00\x00\x00", append([]string{"majordomus-mcp", "serve", "--profile", "review"}, env...)...),
			exe: "/opt/bin/majordomus-mcp", args: []string{"majordomus-mcp", "serve", "--profile", "review"}},
		{name: "no padding, no environment",
			in:  procArgs2(2, "./majordomus-mcp", "", "./majordomus-mcp", "serve"),
			exe: "./majordomus-mcp", args: []string{"./majordomus-mcp", "serve"}},
		{name: "an empty argument after the first is kept",
			in:  procArgs2(3, "/opt/bin/majordomus-mcp", "\x00\x00", "majordomus-mcp", "", "serve"),
			exe: "/opt/bin/majordomus-mcp", args: []string{"majordomus-mcp", "", "serve"}},
		{name: "spaces and non-ASCII stay as they are",
			in:  procArgs2(2, "/Users/dev/My Tools/majordomus-mcp", "\x00", "majordomus-mcp", "--root=/Users/dev/Dévelopment"),
			exe: "/Users/dev/My Tools/majordomus-mcp", args: []string{"majordomus-mcp", "--root=/Users/dev/Dévelopment"}},
		{name: "argc 0",
			in:  procArgs2(0, "/opt/bin/majordomus-mcp", "\x00\x00", env...),
			exe: "/opt/bin/majordomus-mcp", args: []string{}},
		{name: "truncated in the path",
			in:      procArgs2(2, "/opt/bin/majordomus-mcp", "")[:12],
			wantErr: true},
		{name: "truncated in an argument",
			in:  procArgs2(2, "/opt/bin/majordomus-mcp", "\x00\x00", "majordomus-mcp", "serve")[:4+24+2+17],
			exe: "/opt/bin/majordomus-mcp", wantErr: true},
		{name: "argc larger than the strings present",
			in:  procArgs2(5, "/opt/bin/majordomus-mcp", "\x00\x00", "majordomus-mcp", "serve"),
			exe: "/opt/bin/majordomus-mcp", wantErr: true},
		{name: "argc larger than the buffer",
			in:  procArgs2(1<<30, "/opt/bin/majordomus-mcp", "\x00\x00", "majordomus-mcp"),
			exe: "/opt/bin/majordomus-mcp", wantErr: true},
		{name: "argc but nothing after the path",
			in:  procArgs2(1, "/opt/bin/majordomus-mcp", "\x00\x00\x00"),
			exe: "/opt/bin/majordomus-mcp", wantErr: true},
		{name: "negative argc", in: procArgs2(-1, "/opt/bin/majordomus-mcp", ""), wantErr: true},
		{name: "empty path", in: procArgs2(1, "", "\x00\x00", "majordomus-mcp"), wantErr: true},
		{name: "only part of argc", in: []byte{2, 0, 0}, wantErr: true},
		{name: "empty", in: []byte{}, wantErr: true},
		{name: "nil", in: nil, wantErr: true},
	}
	for _, tt := range tests {
		exe, args, err := parseProcArgs2(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error %v", tt.name, err, tt.wantErr)
		}
		if exe != tt.exe {
			t.Errorf("%s: exe %q, want %q", tt.name, exe, tt.exe)
		}
		if tt.wantErr && args != nil {
			t.Errorf("%s: partial args %q returned with an error", tt.name, args)
		}
		if !tt.wantErr && !reflect.DeepEqual(args, tt.args) {
			t.Errorf("%s: args %#v, want %#v", tt.name, args, tt.args)
		}
	}
}

func TestDarwinCommMatches(t *testing.T) {
	long := "majordomus-mcp-nightly" // 22 bytes: p_comm keeps 16
	tests := []struct {
		comm, name string
		want       bool
	}{
		{"majordomus-mcp", "majordomus-mcp", true},
		{"majordomus-mcp", "majordomus", false},
		{"majordomus", "majordomus-mcp", false},
		{long[:16], long, true},
		{long[:15], long, false},
		{"majordomus-mcp-x", long, false},
		{"", "majordomus-mcp", false},
		{"majordomus-mcp", "", false},
	}
	for _, tt := range tests {
		if got := darwinCommMatches(tt.comm, tt.name); got != tt.want {
			t.Errorf("darwinCommMatches(%q, %q) = %v, want %v", tt.comm, tt.name, got, tt.want)
		}
	}
}

// lsofListenOutput is what `lsof -nP -w -a -p 100,200 -iTCP -sTCP:LISTEN
// -F pftn` prints: process 100 listens on IPv4 and IPv6 loopback, on two
// wildcards, and twice on one address; process 200 on an IPv4-mapped
// address. A line lsof would not print is among them.
const lsofListenOutput = "p100\n" +
	"f5\ntIPv4\nn127.0.0.1:8741\n" +
	"f6\ntIPv6\nn[::1]:8741\n" +
	"f7\ntIPv6\nn*:8742\n" +
	"f8\ntIPv4\nn*:8743\n" +
	"f9\ntIPv4\nn127.0.0.1:8741\n" +
	"garbage that is no field\n" +
	"p200\n" +
	"f3\ntIPv6\nn[::ffff:127.0.0.1]:9000\n"

func TestParseLsofFields(t *testing.T) {
	got, err := parseLsofFields([]byte(lsofListenOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]lsofFile{
		100: {
			{"5", "IPv4", "127.0.0.1:8741"},
			{"6", "IPv6", "[::1]:8741"},
			{"7", "IPv6", "*:8742"},
			{"8", "IPv4", "*:8743"},
			{"9", "IPv4", "127.0.0.1:8741"},
		},
		200: {{"3", "IPv6", "[::ffff:127.0.0.1]:9000"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseLsofFields:\n got %+v\nwant %+v", got, want)
	}
	listen, err := lsofListeners(got[100])
	if wantListen := []string{"0.0.0.0:8743", "127.0.0.1:8741", "[::1]:8741", "[::]:8742"}; err != nil || !slices.Equal(listen, wantListen) {
		t.Errorf("lsofListeners(100) = %q %v, want %q", listen, err, wantListen)
	}
	listen, err = lsofListeners(got[200])
	if err != nil || !slices.Equal(listen, []string{"127.0.0.1:9000"}) {
		t.Errorf("lsofListeners(200) = %q %v", listen, err)
	}

	// A process listed without files is still listed; fields lsof adds
	// unasked are skipped; a name before its 'f' opens a file.
	got, err = parseLsofFields([]byte("p300\ncmajordomus-mcp\nu501\np400\nn/Users/dev/src\np300\nfcwd\nn/work\n"))
	want = map[int][]lsofFile{300: {{FD: "cwd", Name: "/work"}}, 400: {{Name: "/Users/dev/src"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parseLsofFields with extra fields = %+v %v, want %+v", got, err, want)
	}

	for _, empty := range []string{"", "\n\n"} {
		if got, err := parseLsofFields([]byte(empty)); err != nil || len(got) != 0 {
			t.Errorf("parseLsofFields(%q) = %+v %v, want nothing", empty, got, err)
		}
	}
	for _, bad := range []string{
		"f5\ntIPv4\nn127.0.0.1:8741\n", // a file before any process
		"pabc\nf5\n",                   // a pid that is none
		"p-3\n",                        // nor is this
		"p\n",                          // nor this
		"p100\nf5\np12x\nn*:1\n",       // a bad pid later
	} {
		if got, err := parseLsofFields([]byte(bad)); err == nil {
			t.Errorf("parseLsofFields(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestLsofListenAddr(t *testing.T) {
	good := []struct{ name, typ, want string }{
		{"127.0.0.1:8741", "IPv4", "127.0.0.1:8741"},
		{"[::1]:8741", "IPv6", "[::1]:8741"},
		{"*:8741", "IPv6", "[::]:8741"},
		{"*:8741", "IPv4", "0.0.0.0:8741"},
		{"*:8741", "", "0.0.0.0:8741"},
		{"[::]:8741", "IPv6", "[::]:8741"},
		{"0.0.0.0:8741", "IPv4", "0.0.0.0:8741"},
		{"[::ffff:127.0.0.1]:8741", "IPv6", "127.0.0.1:8741"},
		{"[fe80::1%lo0]:8741", "IPv6", "[fe80::1%lo0]:8741"},
		{"[2001:DB8::0001]:443", "IPv6", "[2001:db8::1]:443"},
		{"127.0.0.1:8741 (LISTEN)", "IPv4", "127.0.0.1:8741"},
		{"127.0.0.1:8741->127.0.0.1:50000", "IPv4", "127.0.0.1:8741"},
	}
	for _, tt := range good {
		if got, err := lsofListenAddr(tt.name, tt.typ); err != nil || got != tt.want {
			t.Errorf("lsofListenAddr(%q, %q) = %q %v, want %q", tt.name, tt.typ, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1", "*:*", "localhost:8741", "127.0.0.1:http", "127.0.0.1:70000", "[::1:8741", "::1:8741"} {
		if got, err := lsofListenAddr(bad, "IPv4"); err == nil {
			t.Errorf("lsofListenAddr(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := lsofListeners([]lsofFile{{"5", "IPv4", "127.0.0.1:8741"}, {"6", "IPv4", "nonsense"}}); err == nil {
		t.Error("lsofListeners took a name that is no address")
	}
}

func TestLsofProbe(t *testing.T) {
	tests := []struct {
		files  []lsofFile
		cwd    string
		fdsErr bool
	}{
		{nil, "", false},
		{[]lsofFile{{FD: "cwd", Name: "/Users/dev/src/checkout"}}, "/Users/dev/src/checkout", false},
		{[]lsofFile{{FD: "cwd", Name: "cwd|rtd info error: Operation not permitted"}}, "", false},
		{[]lsofFile{{FD: "cwd", Name: "/work"}, {FD: "err", Name: "FD info error: Operation not permitted"}}, "/work", true},
	}
	for _, tt := range tests {
		if cwd, fdsErr := lsofProbe(tt.files); cwd != tt.cwd || fdsErr != tt.fdsErr {
			t.Errorf("lsofProbe(%+v) = %q %v, want %q %v", tt.files, cwd, fdsErr, tt.cwd, tt.fdsErr)
		}
	}
}

func TestAssembleDarwinListening(t *testing.T) {
	args := []string{"majordomus-mcp", "serve"}
	cand := func(pid int) darwinCandidate {
		return darwinCandidate{PID: pid, PPID: 1, Start: uint64(pid) * 1000, Executable: "/opt/bin/majordomus-mcp", Args: args}
	}
	commOnly := darwinCandidate{PID: 99, PPID: 1, Start: 99000} // kern.procargs2 denied
	cands := []darwinCandidate{
		cand(107), // listens; its working directory could not be read
		cand(100), // listens
		cand(101), // runs, listens on nothing
		cand(102), // runs, lsof lists it nowhere
		cand(103), // exited before lsof looked
		cand(104), // its descriptors could not be listed
		cand(105), // its pid was reused since kern.proc.all
		cand(106), // a socket name that is no address
		cand(108), // whether it still runs cannot be told
		commOnly,  // listens
	}
	listen := "p100\nf5\ntIPv4\nn127.0.0.1:8741\nf6\ntIPv6\nn*:8741\n" +
		"p105\nf4\ntIPv4\nn127.0.0.1:9999\n" +
		"p106\nf4\ntIPv4\nnnot-an-address\n" +
		"p107\nf4\ntIPv4\nn127.0.0.1:8750\n" +
		"p108\nf4\ntIPv4\nn127.0.0.1:8751\n" +
		"p99\nf3\ntIPv4\nn127.0.0.1:8752\n" +
		"p500\nf3\ntIPv4\nn127.0.0.1:1\n" // no candidate: ignored
	probe := "p100\nfcwd\nn/Users/dev/src/checkout\n" +
		"p101\nfcwd\nn/Users/dev/src/other\n" +
		"p104\nfcwd\nn/Users/dev\nferr\nnFD info error: Operation not permitted\n" +
		"p105\nfcwd\nn/\n" +
		"p106\nfcwd\nn/\n" +
		"p107\nfcwd\nncwd|rtd info error: Operation not permitted\n" +
		"p108\nfcwd\nn/\n" +
		"p99\nfcwd\nn/tmp\n"
	stillRuns := func(pid int, start uint64) (bool, error) {
		switch pid {
		case 103:
			return false, nil
		case 105:
			return start == 1, nil
		case 108:
			return false, errors.New("sysctl: cannot allocate memory")
		}
		return true, nil
	}
	got, err := assembleDarwinListening(cands, []byte(listen), []byte(probe), stillRuns)
	if err != nil {
		t.Fatal(err)
	}
	want := Listening{
		Processes: []ListeningProcess{
			{PID: 99, PPID: 1, Start: 99000, Listen: []string{"127.0.0.1:8752"}, Cwd: "/tmp"},
			{PID: 100, PPID: 1, Start: 100000, Executable: "/opt/bin/majordomus-mcp", Listen: []string{"127.0.0.1:8741", "[::]:8741"},
				Args: args, Cwd: "/Users/dev/src/checkout"},
			{PID: 107, PPID: 1, Start: 107000, Executable: "/opt/bin/majordomus-mcp", Listen: []string{"127.0.0.1:8750"}, Args: args},
		},
		Uninspectable: []int{102, 104, 106, 108},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("assembleDarwinListening:\n got %+v\nwant %+v", got, want)
	}

	// Nothing listed at all: every candidate that still runs is in doubt.
	got, err = assembleDarwinListening([]darwinCandidate{cand(100), cand(103)}, nil, nil, stillRuns)
	if err != nil || len(got.Processes) != 0 || !slices.Equal(got.Uninspectable, []int{100}) {
		t.Errorf("with empty lsof output: %+v %v, want pid 100 uninspectable", got, err)
	}
	// Output that cannot be attributed leaves no observation.
	for _, bad := range [][2]string{{"n127.0.0.1:8741\n", ""}, {"", "pxyz\n"}} {
		if got, err := assembleDarwinListening([]darwinCandidate{cand(100)}, []byte(bad[0]), []byte(bad[1]), stillRuns); !errors.Is(err, ErrListingUnavailable) {
			t.Errorf("with lsof output %q: %+v %v, want ErrListingUnavailable", bad, got, err)
		}
	}
}

// no partial argument list beside an error, and argc arguments otherwise.
func FuzzParseProcArgs2(f *testing.F) {
	f.Add(procArgs2(2, "/opt/bin/majordomus-mcp", "\x00\x00", "majordomus-mcp", "serve", "HOME=/"))
	f.Add(procArgs2(0, "/x", ""))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		exe, args, err := parseProcArgs2(b)
		if err != nil {
			if args != nil {
				t.Fatalf("args %q beside error %v", args, err)
			}
			return
		}
		if exe == "" || strings.Contains(exe, "\x00") || len(args) != int(int32(binary.NativeEndian.Uint32(b))) {
			t.Fatalf("exe %q args %q from %q", exe, args, b)
		}
	})
}

// FuzzParseLsofFields: no panic, and every process listed is a positive pid.
func FuzzParseLsofFields(f *testing.F) {
	f.Add([]byte(lsofListenOutput))
	f.Add([]byte("p1\nfcwd\nn/\nferr\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		procs, err := parseLsofFields(b)
		if err != nil {
			return
		}
		for pid, files := range procs {
			if pid <= 0 {
				t.Fatalf("pid %d from %q", pid, b)
			}
			for _, file := range files {
				if file.Type != "" || file.Name != "" {
					_, _ = lsofListenAddr(file.Name, file.Type)
				}
			}
			lsofProbe(files)
		}
	})
}
