package webtool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// BlockedError is a connection refused because its host resolved to an
// address of the private network and no allow rule names the host.
type BlockedError struct {
	Host string     // as the URL names it
	Addr netip.Addr // where it resolved
	Kind string     // "loopback", "private", "link-local", ...
}

// Error names the address and the rule that would allow it.
func (e *BlockedError) Error() string {
	rule := e.Host
	if strings.Contains(rule, ":") {
		rule = "[" + rule + "]" // an IPv6 address, as a URL writes it
	}
	if e.Host == e.Addr.String() {
		return fmt.Sprintf("%s is a %s address: WebFetch reaches it only when an allow rule names it, such as WebFetch(domain:%s)", e.Host, e.Kind, rule)
	}
	return fmt.Sprintf("%s resolves to %s, a %s address: WebFetch reaches it only when an allow rule names the host, such as WebFetch(domain:%s)", e.Host, e.Addr, e.Kind, rule)
}

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10") // shared address space (RFC 6598)
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	benchmark = netip.MustParsePrefix("198.18.0.0/15")
)

// Kind returns the kind of non-public address a is ("loopback",
// "private", "link-local", "unspecified", "multicast", "shared"), or ""
// for an address of the public internet. An IPv4 address mapped into
// IPv6 counts as itself.
func Kind(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified(), thisNet.Contains(a):
		return "unspecified"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case cgnat.Contains(a), benchmark.Contains(a):
		return "shared"
	}
	return ""
}

// dialer connects only to addresses its policy admits, resolving names
// itself so that the address checked is the address dialed.
type dialer struct {
	resolver Resolver
	allows   func(host string) bool // nil: no host is named
	net      net.Dialer
}

// DialContext dials addr ("host:port") at the first admitted address of
// host; with none, it returns a *BlockedError (or the lookup's error).
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", addr)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = d.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	var blocked, last error
	for _, a := range addrs {
		if kind := Kind(a); kind != "" && !d.named(host, a) {
			blocked = &BlockedError{Host: host, Addr: a.Unmap(), Kind: kind}
			continue
		}
		c, err := d.net.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	if last != nil {
		return nil, last
	}
	if blocked != nil {
		return nil, blocked
	}
	return nil, errors.New("no address for " + host)
}

// named reports whether an allow rule names host, or the address it
// resolved to.
func (d *dialer) named(host string, a netip.Addr) bool {
	return d.allows != nil && (d.allows(host) || d.allows(a.Unmap().String()))
}
