package node

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// StatusReport is what `status` prints: the lease, how it is judged, the
// identity of the server it names, and how a direct HTTP client of this
// user connects to it.
type StatusReport struct {
	Checkout  string          `json:"checkout"`
	Profile   string          `json:"profile"`
	LeasePath string          `json:"lease_path"`
	Class     string          `json:"class"`
	Reason    string          `json:"reason"`
	Lease     *registry.Lease `json:"lease"`
	Owner     string          `json:"owner"`
	Server    json.RawMessage `json:"server"`
	Connect   *Connection     `json:"connect"`
}

// Connection is what a direct HTTP client sends to the live server: its
// MCP endpoint, and the header that lets it in.
type Connection struct {
	URL    string `json:"url"`
	Header string `json:"header"`
}

// Status reads and judges the lease of co's profile with the timings an
// election would resolve from flags, read-only: it takes no lease, creates
// nothing and changes nothing. The lease's secret is not shown; a live
// server's connection carries the token made of it.
func Status(ctx context.Context, co *Checkout, flags Timings) (StatusReport, error) {
	times, err := ResolveTimings(co.Manifest.Server, flags)
	if err != nil {
		return StatusReport{}, err
	}
	self, err := registry.SelfExecutable()
	if err != nil {
		return StatusReport{}, err
	}
	observer := newObserver(co, self, times)
	report := StatusReport{
		Checkout:  layer.CheckoutName(co.Root, co.Manifest.Name),
		Profile:   co.Profile,
		LeasePath: observer.Path,
		Owner:     proc.OwnerUnknown.String(), // until a lease read says
		Server:    json.RawMessage("null"),
	}
	o, err := observe(ctx, observer)
	var untrusted *untrustedLease
	switch {
	case errors.As(err, &untrusted):
		// Nothing there is read, and no server it names is asked.
		report.Class, report.Reason = string(registry.Unusable), "untrusted lease: "+err.Error()
		return report, nil
	case err != nil:
		return StatusReport{}, err
	}
	report.Class, report.Reason = string(o.Verdict.Class), o.Verdict.Reason
	report.Lease, report.Owner = o.Lease, o.Owner.String()
	// Another checkout's server is not this one's to report, and one just
	// silent on the probe would keep status waiting as long once more.
	if o.Lease != nil && o.Lease.HasURL() && o.Elsewhere == "" && !o.Silent {
		if id, err := registry.FetchReport(ctx, o.Lease.URLString(), o.Lease.Secret, times.ProbeTimeout); err == nil {
			report.Server = id
			if fullIn(id) && o.Verdict.Class == registry.Live {
				report.Reason += "; it is full: it opens no session until one ends, and a new client that needs one is served alone meanwhile"
			}
			if o.Verdict.Class == registry.Live {
				report.Connect = &Connection{
					URL:    strings.TrimSuffix(o.Lease.URLString(), "/") + "/mcp",
					Header: "Authorization: " + secret.Authorization(o.Lease.Secret),
				}
			}
		}
	}
	if o.Lease != nil && o.Lease.Secret != "" {
		redacted := *o.Lease
		redacted.Secret = "(not shown)" // the token in connect is all a client needs
		report.Lease = &redacted
	}
	return report, nil
}
