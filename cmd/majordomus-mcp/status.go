package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
)

// statusReport is what `status` prints: the lease, how it is judged, the
// identity of the server it names, and how a direct HTTP client of this
// user connects to it.
type statusReport struct {
	Checkout  string          `json:"checkout"`
	Profile   string          `json:"profile"`
	LeasePath string          `json:"lease_path"`
	Class     string          `json:"class"`
	Reason    string          `json:"reason"`
	Lease     *registry.Lease `json:"lease"`
	Owner     string          `json:"owner"`
	Server    json.RawMessage `json:"server"`
	Connect   *connection     `json:"connect"`
}

// connection is what a direct HTTP client sends to the live server: its
// MCP endpoint, and the header that lets it in (SPEC §13).
type connection struct {
	URL    string `json:"url"`
	Header string `json:"header"`
}

// runStatus reports the checkout's shared server, read-only: it takes no
// lease, creates nothing and changes nothing.
func runStatus(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("status takes no arguments")
	}
	if err := registry.ValidateProfile(env.opts.profile); err != nil {
		return usageError("--profile: %v", err)
	}
	co, err := findCheckout(env)
	if err != nil {
		return err
	}
	times, err := node.ResolveTimings(co.Manifest.Server, env.opts.times)
	if err != nil {
		return nodeError(err)
	}
	self, err := registry.SelfExecutable()
	if err != nil {
		return withCode(exitInternal, err)
	}
	path := registry.Path(co.Root, env.opts.profile)
	observer := &registry.Observer{
		Path:         path,
		RepositoryID: layer.RepositoryID(co.Root),
		Executable:   self,
		Version:      release.Number,
		Timings:      registry.Timings{BindGrace: times.BindGrace},
		Probe:        registry.HTTPProbe(times.ProbeTimeout),
	}
	if err := registry.Trusted(path); err != nil {
		// Nothing there is read, and no server it names is asked.
		return encodeStatus(env, statusReport{
			Checkout: layer.CheckoutName(co.Root, co.Manifest.Name), Profile: env.opts.profile, LeasePath: path,
			Class: string(registry.Unusable), Reason: "untrusted lease: " + err.Error(), Server: json.RawMessage("null"),
		})
	}
	o, err := observer.Observe(ctx)
	if err != nil {
		return withCode(exitInternal, err)
	}
	report := statusReport{
		Checkout:  layer.CheckoutName(co.Root, co.Manifest.Name),
		Profile:   env.opts.profile,
		LeasePath: path,
		Class:     string(o.Verdict.Class),
		Reason:    o.Verdict.Reason,
		Lease:     o.Lease,
		Owner:     o.Owner.String(),
		Server:    json.RawMessage("null"),
	}
	if o.Lease != nil && o.Lease.HasURL() {
		if id, err := registry.FetchReport(ctx, o.Lease.URLString(), o.Lease.Secret, times.ProbeTimeout); err == nil {
			report.Server = id
			if o.Verdict.Class == registry.Live {
				report.Connect = &connection{
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
	return encodeStatus(env, report)
}

func encodeStatus(env *environment, report statusReport) error {
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(report)
}
