package httpx

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the addresses of reverse proxies (load balancers) in
// front of the server whose X-Forwarded-For header is believed. Rate limits
// per client IP (sign-in attempts, sign-ups) key on the address it yields:
// behind a proxy, the peer address is the proxy's, shared by every client.
// The zero value trusts no proxy, and the peer address is the client's.
type TrustedProxies []netip.Prefix

// ParseTrustedProxies reads a list of CIDR prefixes or single addresses
// ("10.0.0.0/8", "192.0.2.7", "::1").
func ParseTrustedProxies(list []string) (TrustedProxies, error) {
	var out TrustedProxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: want an IP address or a CIDR prefix", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// trusts reports whether a is one of the proxies.
func (t TrustedProxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientIP is the address of the client that sent r: the peer's, unless the
// peer is a trusted proxy; then the X-Forwarded-For entries are read from
// the right (the nearest hop first), skipping trusted proxies, and the first
// other address is the client's. An entry that is not an address ends the
// walk at the last hop vouched for, so a client cannot pick its own address
// by sending the header itself.
func (t TrustedProxies) ClientIP(r *http.Request) string {
	peer := remoteIP(r.RemoteAddr)
	addr, err := netip.ParseAddr(peer)
	if err != nil || len(t) == 0 || !t.trusts(addr) {
		return peer
	}
	client := addr.Unmap()
	hops := forwardedFor(r.Header)
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = hop
		if !t.trusts(hop) {
			break
		}
	}
	return client.String()
}

// forwardedFor returns the entries of every X-Forwarded-For header line, in
// order.
func forwardedFor(h http.Header) []string {
	var out []string
	for _, line := range h.Values("X-Forwarded-For") {
		for part := range strings.SplitSeq(line, ",") {
			out = append(out, strings.TrimSpace(part))
		}
	}
	return out
}

// parseHop reads one X-Forwarded-For entry: an address, possibly with a
// port ("192.0.2.1:5000", "[2001:db8::1]:443").
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}
