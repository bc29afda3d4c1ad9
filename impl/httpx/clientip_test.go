package httpx_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stratahq/strata/impl/httpx"
)

func TestClientIP(t *testing.T) {
	t.Parallel()
	proxies, err := httpx.ParseTrustedProxies([]string{"10.0.0.0/8", " 192.0.2.7 ", "::1", ""})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, peer string
		xff        []string
		trusted    httpx.TrustedProxies
		want       string
	}{
		{"no proxies: the peer, whatever the header says", "198.51.100.1:4000", []string{"203.0.113.9"}, nil, "198.51.100.1"},
		{"untrusted peer: the header is ignored", "198.51.100.1:4000", []string{"203.0.113.9"}, proxies, "198.51.100.1"},
		{"trusted peer: the address it reports", "10.1.2.3:4000", []string{"203.0.113.9"}, proxies, "203.0.113.9"},
		{"a client's own entry on the left does not count", "10.1.2.3:4000", []string{"1.1.1.1, 203.0.113.9"}, proxies, "203.0.113.9"},
		{"trusted hops are skipped", "10.1.2.3:4000", []string{"203.0.113.9, 192.0.2.7", "10.9.9.9"}, proxies, "203.0.113.9"},
		{"entries with ports", "[::1]:4000", []string{"[2001:db8::5]:443"}, proxies, "2001:db8::5"},
		{"garbage stops at the last hop vouched for", "10.1.2.3:4000", []string{"203.0.113.9, not-an-ip, 10.4.4.4"}, proxies, "10.4.4.4"},
		{"trusted peer without a header: the peer", "192.0.2.7:4000", nil, proxies, "192.0.2.7"},
		{"IPv4-mapped peer", "[::ffff:10.1.2.3]:4000", []string{"203.0.113.9"}, proxies, "203.0.113.9"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := c.trusted.ClientIP(r); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.1/8/8"} {
		if _, err := httpx.ParseTrustedProxies([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
