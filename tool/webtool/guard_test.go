package webtool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestKind(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"127.0.0.1", "loopback"},
		{"127.9.9.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"224.0.0.1", "link-local"},
		{"239.1.1.1", "multicast"},
		{"ff05::1", "multicast"},
		{"100.64.0.1", "shared"},
		{"93.184.216.34", ""},
		{"2606:4700::1111", ""},
	}
	for _, tt := range tests {
		if got := Kind(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("Kind(%s) = %q; want %q", tt.addr, got, tt.want)
		}
	}
}

// TestFetchRefusesPrivate: every non-public address is refused, after
// DNS resolution too, with an error naming the address and the rule;
// nothing is asked of the model.
func TestFetchRefusesPrivate(t *testing.T) {
	model, srv := fakeModel(t, "never")
	dns := fakeDNS{"sneaky.test": "127.0.0.1", "meta.test": "169.254.169.254"}
	f := NewFetch(FetchConfig{Model: model, Resolver: dns, Allows: names("example.com")})
	tests := []struct{ url, want string }{
		{"http://127.0.0.1:1/", "127.0.0.1 is a loopback address: WebFetch reaches it only when an allow rule names it, such as WebFetch(domain:127.0.0.1)"},
		{"http://10.0.0.7/", "10.0.0.7 is a private address"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"},
		{"http://[::1]:1/", "::1 is a loopback address: WebFetch reaches it only when an allow rule names it, such as WebFetch(domain:[::1])"},
		{"http://sneaky.test:1/", "sneaky.test resolves to 127.0.0.1, a loopback address: WebFetch reaches it only when an allow rule names the host, such as WebFetch(domain:sneaky.test)"},
		{"http://meta.test/", "meta.test resolves to 169.254.169.254, a link-local address"},
		{"http://0.0.0.0:1/", "unspecified"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			res := call(t, f, tt.url, "p")
			if !res.IsError || !strings.Contains(res.Content, tt.want) {
				t.Errorf("result = %+v; want an error with %q", res, tt.want)
			}
		})
	}
	if n := srv.RequestCount(); n != 0 {
		t.Errorf("%d model requests for refused fetches; want 0", n)
	}
}

// TestFetchAllowedByRule: a rule naming the host (or its address) opens
// the private address; a rule naming another host does not.
func TestFetchAllowedByRule(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "internal docs")
	}))
	defer site.Close()
	model, _ := fakeModel(t, "ok")
	dns := fakeDNS{"docs.internal": "127.0.0.1"}
	tests := []struct {
		name  string
		rules []string
		host  string
		ok    bool
	}{
		{"address named", []string{"127.0.0.1"}, "127.0.0.1", true},
		{"host named", []string{"docs.internal"}, "docs.internal", true},
		{"address named covers a name resolving to it", []string{"127.0.0.1"}, "docs.internal", true},
		{"other host named", []string{"docs.example"}, "docs.internal", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFetch(FetchConfig{Model: model, Resolver: dns, Allows: names(tt.rules...)})
			res := call(t, f, hostURL(site, tt.host, "/"), "p")
			if res.IsError == tt.ok {
				t.Errorf("result = %+v; want ok %v", res, tt.ok)
			}
		})
	}
}

func TestFetchIPv6LoopbackAllowed(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	site := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "v6") }))
	site.Listener.Close()
	site.Listener = ln
	site.Start()
	defer site.Close()
	model, _ := fakeModel(t, "ok")
	f := NewFetch(FetchConfig{Model: model, Allows: names("::1")})
	if res := call(t, f, site.URL, "p"); res.IsError {
		t.Errorf("fetch of %s with WebFetch(domain:[::1]): %+v", site.URL, res)
	}
	f = NewFetch(FetchConfig{Model: model})
	if res := call(t, f, site.URL, "p"); !res.IsError {
		t.Errorf("fetch of %s without a rule succeeded", site.URL)
	}
}

// TestDialerChecksEachAddress: with a name resolving to a private and a
// public address, the private one is skipped (the dial goes on).
func TestDialerChecksEachAddress(t *testing.T) {
	d := &dialer{resolver: multiDNS{"127.0.0.1"}}
	_, err := d.DialContext(t.Context(), "tcp", "x.test:80")
	var b *BlockedError
	if !errors.As(err, &b) || b.Addr.String() != "127.0.0.1" || b.Host != "x.test" {
		t.Errorf("DialContext = %v; want a BlockedError for 127.0.0.1", err)
	}
}

type multiDNS []string

func (m multiDNS) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range m {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}
