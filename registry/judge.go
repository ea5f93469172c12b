package registry

import (
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// Default timings (docs/design.md#the-lease); each can be overridden
// through [Timings].
const (
	DefaultBindGrace    = 15 * time.Second
	DefaultProbeTimeout = 2 * time.Second
)

// Class is the judge's verdict on a lease path; the names are the log
// vocabulary and the state machine's own (see the package doc, Classes).
type Class string

const (
	Absent     Class = "absent"     // no file: acquire
	Live       Class = "live"       // its server answers the probe: attach
	Stale      Class = "stale"      // its server does not answer: take over
	Busy       Class = "busy"       // silent, owner alive: wait up to the busy grace
	Corrupt    Class = "corrupt"    // not a lease document (or a symlink): take over
	Empty      Class = "empty"      // empty or whitespace, which no owner writes: take over
	Binding    Class = "binding"    // no URL yet, its owner alive and started within the bind grace: wait
	Abandoned  Class = "abandoned"  // no URL and old, or owner gone: take over
	Superseded Class = "superseded" // started from a replaced or older executable: take over
	Unusable   Class = "unusable"   // a directory, or unreadable: serve alone
	// Unprobed is returned only while Input.Probe is ProbeNone and the
	// document needs a probe: probe, then judge again.
	Unprobed Class = "unprobed"
)

// Classes are every class a judgement can give, in the order above.
var Classes = []Class{Absent, Live, Stale, Busy, Corrupt, Empty, Binding, Abandoned, Superseded, Unusable, Unprobed}

// TakesOver reports whether a lease of this class is to be removed and
// replaced.
func (c Class) TakesOver() bool {
	switch c {
	case Stale, Corrupt, Empty, Abandoned, Superseded:
		return true
	}
	return false
}

// ProbeStatus is the outcome of probing a lease's URL.
type ProbeStatus int

// ProbeStatus values.
const (
	ProbeNone   ProbeStatus = iota // not probed
	ProbeOK                        // answered for this checkout, this instance, leaseholder: true
	ProbeFailed                    // anything else; Reason says what
)

// ProbeResult is what the probe found.
type ProbeResult struct {
	Status ProbeStatus
	// Reason says why a probe failed ("connection refused", "status 500"…).
	Reason string
	// Silent says the server failed it by saying nothing within the
	// timeout (a frozen one).
	Silent bool
	// Conn is the connection a ProbeOK server proved itself on, open for
	// what follows (the judge ignores it; see Observation.Proven).
	Conn net.Conn
	// Identity is what a ProbeOK server said of itself (GET /), proof
	// checked.
	Identity json.RawMessage
}

// Timings are the judge's graces; a zero field means its default.
type Timings struct {
	// BindGrace is how long a lease without a URL may be waited for,
	// counted from its owner's started_at. Default 15 s.
	BindGrace time.Duration
}

// Input is everything the judge looks at. It is computed by the caller:
// [Observer.Observe] does it from the file system.
type Input struct {
	// Found is what is at the lease path; Raw its bytes (a link's target).
	Found Found
	Raw   []byte
	// ReadErr is the OS reason when Found is Unreadable.
	ReadErr string
	// Now is the judging process's clock, which ages a lease without a URL
	// from its owner's started_at (never from the file's mtime, which
	// anyone may touch).
	Now time.Time
	// Owner is the liveness of the decoded document's owner.
	Owner proc.Liveness
	// Probe is the result of probing the document's URL.
	Probe ProbeResult
	// Executable and Version describe the judging process, and Profile
	// the profile whose lease path was read ("": any).
	Executable Executable
	Version    string
	Profile    string
	// OnDisk is the file now at the path of the lease's executable, when
	// that is the judging process's path too (zero when unread): a lease
	// is superseded when this process was started from that file and its
	// server was not.
	OnDisk Executable
	// Elsewhere is the root the decoded document was written for, when
	// that is another directory than this checkout's ([Observer.Root]):
	// its server does not answer for this checkout, and is not asked.
	// Shared says that the lease's directory is that checkout's too: the
	// two share their .ai.
	Elsewhere string
	Shared    bool
	// Foreign are the namespaces the decoded document's owner runs in,
	// when they are not the judging process's ([Lease.Namespaces]): Owner
	// is told by the lock it holds on the lease, not by its pid. OutOfReach
	// says that its network namespace is another too: its loopback, and so
	// its server, cannot be reached from here.
	Foreign    string
	OutOfReach bool
	Timings    Timings
}

// Verdict is the judge's answer.
type Verdict struct {
	Class Class
	// Reason is a log-ready sentence starting with the class, such as
	// "corrupt lease: not JSON (…)". Callers append "; taking it over".
	Reason string
	// NeedsProbe is true when the document is valid, names a URL and is not
	// superseded: only then does its server's answer matter.
	NeedsProbe bool
	// Grace is, for Binding, how much longer the lease stays binding
	// before it counts as abandoned.
	Grace time.Duration
}

// clockTolerance is how far ahead of the judge's clock a started_at may
// be and still count as just now. The owner stamps it on this host before
// it links the lease, so it can be ahead only after the clock stepped back;
// further ahead, no wait can be counted from it, and a lease nobody can age
// is not waited for (it would hold every client until that time came).
const clockTolerance = time.Second

// Judge classifies a lease path (docs/design.md#judging-a-lease). It is
// pure: no I/O, and the time is in.Now.
func Judge(in Input) Verdict {
	switch in.Found {
	case Missing:
		return verdict(Absent, "absent lease: there is no lease file")
	case Directory:
		return verdict(Unusable, "unusable lease: the lease path is a directory")
	case Unreadable:
		return verdict(Unusable, "unusable lease: the lease path cannot be read ("+in.ReadErr+")")
	case Symlink:
		return verdict(Corrupt, fmt.Sprintf("corrupt lease: the lease path is a symbolic link (to %q), which is never followed", in.Raw))
	case Special:
		return verdict(Corrupt, "corrupt lease: the lease path is not a regular file")
	}

	doc, problem := decode(in.Raw)
	switch {
	case problem == problemEmpty:
		// A lease is linked into place complete: nobody is writing this
		// one. (Where links are missing, the lease is written in place
		// under the sidecar lock, which a take-over waits for and then
		// finds the file complete, so it removes nothing.)
		return verdict(Empty, "empty lease: the file holds nothing, and no owner writes a lease that way (it links it into place complete)")
	case problem != "":
		return verdict(Corrupt, "corrupt lease: "+problem)
	case in.Profile != "" && doc.Profile != "" && !strings.EqualFold(doc.Profile, in.Profile): // one file where names ignore case
		return verdict(Corrupt, fmt.Sprintf("corrupt lease: it is profile %q's, at the path of profile %q's", doc.Profile, in.Profile))
	}

	// A server in other namespaces is not superseded from this side: its
	// executable's path may name another file here, and a server started
	// here would be out of its clients' reach.
	if reason, ok := superseded(doc, in.Executable, in.OnDisk, in.Version); ok && in.Foreign == "" {
		return verdict(Superseded, reason)
	}
	pid := fmt.Sprintf("pid %d", doc.PID)
	if in.Foreign != "" {
		pid += " in " + in.Foreign
	}

	if !doc.HasURL() {
		grace := in.Timings.BindGrace
		if grace <= 0 {
			grace = DefaultBindGrace
		}
		return judgeUnbound(doc, pid, in.Owner, in.Now, grace)
	}

	url := doc.URLString()
	v := Verdict{NeedsProbe: in.Elsewhere == ""}
	probe := in.Probe
	if in.Elsewhere != "" {
		// Its server would prove the copied secret, for that checkout.
		probe = ProbeResult{Status: ProbeFailed, Reason: "it serves the checkout at " + strconv.Quote(in.Elsewhere) +
			", for which the lease was written: it came here with a copy of it"}
	}
	switch {
	case probe.Status == ProbeNone:
		v.Class, v.Reason = Unprobed, "unprobed lease: the server it names at "+url+" has not been probed"
	case probe.Status == ProbeOK:
		v.Class, v.Reason = Live, "live lease: the server at "+url+" answers for this checkout"
	case in.OutOfReach && in.Owner == proc.OwnerAlive:
		// A container's server and its host's, sharing the checkout: taking
		// over one that is alive would only start a war over the lease.
		v.Class = Unusable
		v.Reason = "unusable lease: the server it names at " + url + " runs in another network namespace than this process (a container's, or its host's), out of its reach (" + probe.Reason + "), and its owner (" + pid + ") holds the lease"
	case in.Shared && in.Owner != proc.OwnerGone:
		// Its server serves that checkout, and holds this very lease:
		// taking it over would only start a war over it.
		v.Class = Unusable
		v.Reason = "unusable lease: this checkout's .ai is the checkout at " + strconv.Quote(in.Elsewhere) + "'s too, whose server at " + url + " holds this lease for it (" + pid + "); give each checkout an .ai of its own to share a server in each"
	case in.Owner == proc.OwnerGone && in.Elsewhere != "":
		v.Class = Stale
		v.Reason = "stale lease: it came here with a copy of the checkout at " + strconv.Quote(in.Elsewhere) + ", whose server it names at " + url + ", and nobody here holds it"
	case in.Owner == proc.OwnerGone:
		v.Class = Stale
		v.Reason = "stale lease: the server it names at " + url + " does not answer for this checkout and its owner (" + pid + ") is gone (" + probe.Reason + ")"
	default:
		owner := "its owner (" + pid + ") is alive"
		if in.Owner == proc.OwnerUnknown {
			owner = "whether its owner (" + pid + ") is alive cannot be told"
		}
		v.Class = Busy
		v.Reason = fmt.Sprintf("busy lease: the server it names at %s does not answer (%s) but %s", url, probe.Reason, owner)
	}
	return v
}

// judgeUnbound judges a lease without a URL: binding while its owner may
// still publish one, within the bind grace of its started_at; abandoned
// otherwise.
func judgeUnbound(doc Lease, pid string, owner proc.Liveness, now time.Time, grace time.Duration) Verdict {
	started, err := time.Parse(time.RFC3339, doc.StartedAt)
	ahead := started.Sub(now)
	age := max(-ahead, 0)
	switch {
	case owner == proc.OwnerGone:
		return verdict(Abandoned, "abandoned lease: its owner never published a URL ("+pid+" is gone)")
	case err != nil:
		return verdict(Abandoned, fmt.Sprintf("abandoned lease: its owner never published a URL, and its started_at (%q) is no time to count a wait from", doc.StartedAt))
	case ahead > clockTolerance:
		return verdict(Abandoned, fmt.Sprintf("abandoned lease: its owner never published a URL, and its started_at (%s) is %s ahead of this host's clock", doc.StartedAt, round(ahead)))
	case age >= grace:
		return verdict(Abandoned, fmt.Sprintf("abandoned lease: its owner never published a URL (started %s ago, grace %s)", round(age), grace))
	}
	v := verdict(Binding, fmt.Sprintf("binding lease: its owner (%s) has not published a URL yet (started %s ago, grace %s)", pid, round(age), grace))
	v.Grace = grace - age
	return v
}

func verdict(c Class, reason string) Verdict {
	return Verdict{Class: c, Reason: reason}
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

// superseded reports whether doc was written by a server this executable
// replaces: started from the same path, whose file this process was
// started from and that server was not, or an older x.y.z version. A
// different path, a file that cannot be read, a missing field or a version
// that does not parse makes no claim: two processes of one old file would
// otherwise take the lease from each other for good. Nor does a process
// whose own file has been replaced since, under the path the server was
// started from, claim by its version: what is installed there now is what
// the user chose (an older release put back in its place), and its server
// would take the lease back as started from a replaced file, for good.
func superseded(doc Lease, self, onDisk Executable, version string) (string, bool) {
	current := func(x Executable) bool { return x.MTime == onDisk.MTime && x.Size == onDisk.Size }
	if e := doc.Executable; e != nil && e.Path != "" && e.Path == self.Path && onDisk.Path != "" {
		if !current(self) {
			return "", false
		}
		if !current(*e) {
			return "superseded lease: the server was started from " + e.Path + " and that file has been replaced since", true
		}
	}
	theirs, ok1 := parseVersion(doc.Version)
	ours, ok2 := parseVersion(version)
	if ok1 && ok2 && slices.Compare(theirs[:], ours[:]) < 0 {
		return fmt.Sprintf("superseded lease: the server it names runs version %s, older than this executable's %s", doc.Version, version), true
	}
	return "", false
}

// parseVersion accepts exactly x.y.z of decimal numbers, with an optional
// leading "v"; pre-release and build suffixes make no claim.
func parseVersion(s string) ([3]uint64, bool) {
	var v [3]uint64
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64) // decimal digits only: no sign, no "_"
		if err != nil {
			return v, false
		}
		v[i] = n
	}
	return v, true
}
