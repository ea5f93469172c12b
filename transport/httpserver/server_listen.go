package httpserver

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/rawio"
)

// Where the shared server listens, and who may connect: loopback by
// default, a Host header that names loopback on a loopback connection (no
// DNS rebinding), and a bounded number of connections.

// Listen binds host:port. Port 0 takes any free port. A port that cannot be
// bound (taken, say) falls back to a free one on the same host, logged at
// warn. A host that is not a loopback address is bound and served, with a
// warning naming what it exposes.
func Listen(host string, port int, log *zap.Logger) (net.Listener, error) {
	log = cmp.Or(log, zap.NewNop())
	network := "tcp" // a name: whatever it resolves to
	if ip, err := netip.ParseAddr(host); err == nil {
		network = "tcp6"
		if ip.Is4() {
			network = "tcp4" // 0.0.0.0 is IPv4 only, not [::]
		}
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ln, err := net.Listen(network, addr)
	if err != nil && port != 0 {
		reason := err
		if op, ok := errors.AsType[*net.OpError](err); ok {
			reason = op.Err
		}
		log.Warn(fmt.Sprintf("cannot bind %s: %v; taking a free port instead", addr, reason),
			zap.String("address", addr), zap.String("reason", reason.Error()))
		ln, err = net.Listen(network, net.JoinHostPort(host, "0"))
	}
	if err != nil {
		return nil, fmt.Errorf("binding %s: %w", addr, err)
	}
	if !isLoopbackAddr(ln.Addr()) {
		log.Warn(fmt.Sprintf("bound to %s, which is not a loopback address: every host that can reach this interface "+
			"can connect to this server, which serves only requests carrying the lease's token (plain HTTP: a token a remote client sends "+
			"crosses the network unencrypted, and with it the checkout's AI layer, diagnostics and peers); bind 127.0.0.1 unless that is intended", ln.Addr()),
			zap.String("address", ln.Addr().String()))
	}
	return ln, nil
}

// URLOf is the URL clients use to reach a server listening on addr:
// "http://host:port". An unspecified address (0.0.0.0, ::) is named by the
// loopback address of its family, which is what a local client can dial and
// what passes the server's Host check.
func URLOf(addr net.Addr) string {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	ip := ap.Addr().Unmap()
	if ip.IsUnspecified() {
		ip = netip.MustParseAddr("127.0.0.1")
		if ap.Addr().Is6() && !ap.Addr().Is4In6() {
			ip = netip.IPv6Loopback()
		}
	}
	return "http://" + netip.AddrPortFrom(ip, ap.Port()).String()
}

// isLoopbackAddr reports whether a listener or connection address is a
// loopback address.
func isLoopbackAddr(addr net.Addr) bool {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && ap.Addr().IsLoopback()
}

// isLoopbackName reports whether a Host header names a loopback host.
func isLoopbackName(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// hostAllowed refuses DNS rebinding: a request that came in on a loopback
// connection must name a loopback host.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopbackAddr(local) {
		return true
	}
	return isLoopbackName(r.Host)
}

// connKey keys a request's connection in its context (withConn).
type connKey struct{}

// withConn gives each request's context its connection
// (http.Server.ConnContext), which connOf returns.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connOf is the connection r came on, or nil.
func connOf(r *http.Request) net.Conn {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	return c
}

// connCount counts a server's open connections, and keeps those no
// request of which proved the lease's secret (see prove) in the order they
// were accepted, the oldest first to make room.
type connCount struct {
	mu       sync.Mutex
	open     map[net.Conn]*connMark
	unproven list.List // of net.Conn, oldest first
	idled    uint64    // connections turned idle so far, which orders them
}

type connMark struct {
	state    http.ConnState
	unproven *list.Element // nil once proven
	arrived  func()        // a client coming on it (coming) arrived: its next request served, or its close
	arriving bool          // that request is being served
	idle     uint64        // idled when it last turned idle
	inPlace  bool          // admitted in the place of a proven one, closed to make room for it
}

// admit counts conn in, within max: beyond it, the oldest connection no
// request of which proved the secret is closed to make room, so that
// whoever can reach the port without the token (another local user) can
// hold no place that a client of the lease needs. An idle one goes first
// (its requests were served, none with the token); a new one, whose first
// request may be the owner's and on its way, or one serving a request,
// only when no unproven one is idle. Where every one is proven, the one
// idle the longest goes (a client's keep-alive connection, which it dials
// again), so that connections that merely pile up never turn a new
// client's probe away, which would have it take a healthy server's lease
// over; one serving a request or holding a stream, or one a client is
// coming on (coming), never does; nor, while one is so idle, a new one
// that took a proven one's place, whose probe may be on its way. Where
// none is so idle, conn is refused: admit reports whether conn was
// counted.
func (c *connCount) admit(conn net.Conn, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = map[net.Conn]*connMark{}
	}
	inPlace := false
	if len(c.open) >= max {
		old := c.makingRoom()
		if old == nil {
			return false
		}
		inPlace = c.open[old].unproven == nil
		old.Close()
		c.forget(old) // its descriptor is gone already
	}
	c.open[conn] = &connMark{state: http.StateNew, unproven: c.unproven.PushBack(conn), inPlace: inPlace}
	return true
}

// makingRoom is the connection admit closes, or nil (mu held). One that
// took an idle proven one's place goes only after every proven one that
// is idle: its probe is likely on its way, the owner's newcomer's, which a
// second newcomer would otherwise turn away; idle too, as status's is
// between its probe, which asks no seal, and its token.
func (c *connCount) makingRoom() net.Conn {
	var victim *list.Element
	for e := c.unproven.Front(); e != nil; e = e.Next() {
		if m := c.open[e.Value.(net.Conn)]; m.inPlace {
			continue
		} else if m.state == http.StateIdle {
			return e.Value.(net.Conn)
		} else if victim == nil {
			victim = e
		}
	}
	if victim != nil {
		return victim.Value.(net.Conn)
	}
	var oldest net.Conn
	for conn, m := range c.open {
		if m.state == http.StateIdle && m.arrived == nil && (oldest == nil || m.idle < c.open[oldest].idle) {
			oldest = conn
		}
	}
	if oldest == nil && c.unproven.Front() != nil {
		return c.unproven.Front().Value.(net.Conn)
	}
	return oldest
}

// forget stops counting conn (mu held).
func (c *connCount) forget(conn net.Conn) {
	if m := c.open[conn]; m != nil && m.unproven != nil {
		c.unproven.Remove(m.unproven)
	}
	if m := c.open[conn]; m != nil && m.arrived != nil {
		go m.arrived() // it reports, which may call back into the server
	}
	delete(c.open, conn)
}

// coming counts a client coming on conn, whose request is being served,
// until conn has carried its next request or closes (await). await reports,
// which may call back into the server: it is called with mu free.
func (c *connCount) coming(conn net.Conn, await func() (arrived func())) {
	c.mu.Lock()
	m := c.open[conn]
	awaited := m == nil || m.arrived != nil
	c.mu.Unlock()
	if awaited {
		return
	}
	arrived := await()
	c.mu.Lock()
	if m = c.open[conn]; m == nil || m.arrived != nil { // closed meanwhile
		c.mu.Unlock()
		arrived()
		return
	}
	m.arrived = arrived
	c.mu.Unlock()
}

// notArrived keeps a client coming on conn counted past the request being
// served: one that belongs to no session and opens no listen (a 2026-07-28
// client's first call, or its bridge's own tools/list) holds no place of
// its own, and its presence opens only after it, on another connection.
// The client counts until its next request, its connection's close or
// comingGrace, as before its first.
func (c *connCount) notArrived(conn net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.open[conn]; m != nil && m.arrived != nil {
		m.arriving = false
	}
}

// track follows a connection's state (http.Server.ConnState).
func (c *connCount) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := c.open[conn]; {
	case m == nil: // closed to make room for another
	case state == http.StateClosed || state == http.StateHijacked:
		c.forget(conn)
	default:
		switch {
		case m.arrived == nil:
		case state == http.StateActive: // the request the probe announced: an initialize opens a session as it is served
			m.arriving = true
		case m.arriving: // served: its session, if any, counts now
			go m.arrived()
			m.arrived, m.arriving = nil, false
		}
		if state == http.StateIdle && m.state != http.StateIdle {
			c.idled++
			m.idle = c.idled
		}
		m.state = state
	}
}

// prove marks conn as one a request of which proved the lease's secret:
// it is closed to make room only once every place is proven, and then
// only idle (admit). It reports whether conn is still counted: one
// closed to make room serves its request to nobody, and the request is
// not to be run.
func (c *connCount) prove(conn net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.open[conn]
	if m != nil && m.unproven != nil {
		c.unproven.Remove(m.unproven)
		m.unproven = nil
	}
	return m != nil
}

// closeUnproven closes the connections no request of which proved the
// secret, which http.Server.Shutdown would wait for, and the lease's
// release with it: one that began no request (a client's spare one) five
// seconds, and one whose answer its client does not read (anyone's, no
// token asked) as long as the shutdown lets it. None carries a call of the
// lease's owner.
func (c *connCount) closeUnproven() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.unproven.Front(); e != nil; e = e.Next() {
		e.Value.(net.Conn).Close()
	}
}

// cappedListener admits what it accepts by its count (connCount.admit),
// and closes what it cannot admit, rather than make it wait: a flood of
// them costs one accept each. What it keeps is read and written raw
// (internal/rawio): a request then wakes no thread of the runtime's but
// the one that serves it, which leaves an idle server's monitor thread
// asleep through a bridge's heartbeat, and through the timer that the
// request's read deadline leaves behind (B11).
type cappedListener struct {
	net.Listener
	conns *connCount
	max   int
}

func (l cappedListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if raw := rawio.Conn(conn); l.conns.admit(raw, l.max) {
			return raw, nil
		}
		conn.Close()
	}
}
