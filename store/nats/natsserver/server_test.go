package natsserver

import (
	"errors"
	"net"
	"strings"
	"testing"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestStart starts a server on a free port with a token and uses
// JetStream through the URL it reports.
func TestStart(t *testing.T) {
	s, err := Start(Config{Addr: "0.0.0.0:0", Data: t.TempDir(), Token: "tok"})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer s.Stop()
	if !strings.HasPrefix(s.URL, "nats://127.0.0.1:") || strings.HasSuffix(s.URL, ":0") {
		t.Errorf("URL = %q; want nats://127.0.0.1 with the bound port", s.URL)
	}
	if _, err := natsgo.Connect(s.URL); err == nil {
		t.Error("Connect without the token succeeded; want it refused")
	}
	nc, err := natsgo.Connect(s.URL, natsgo.Token("tok"))
	if err != nil {
		t.Fatalf("Connect with the token: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "probe", Subjects: []string{"probe"}}); err != nil {
		t.Errorf("CreateStream: %v; want JetStream on", err)
	}
	if got := s.Describe(Cluster{}); got != "" {
		t.Errorf("Describe of a single server = %q; want empty", got)
	}
}

// TestStartAddressInUse: a second server on the same port fails at once,
// naming the address, and is not a configuration error.
func TestStartAddressInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	_, err = Start(Config{Addr: addr, Data: t.TempDir()}) // the default wait: the check must not need it
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Start on a taken %s = %v; want an error naming it and saying it is in use", addr, err)
	}
	if _, ok := errors.AsType[*ConfigError](err); ok {
		t.Errorf("Start on a taken address = %T; want no ConfigError", err)
	}
}

// TestConfigErrors: configurations that cannot work are ConfigErrors
// naming the flag at fault, and start nothing.
func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		addr string
		c    Cluster
		want string
	}{
		{"bad address", "4222", Cluster{}, `--addr "4222"`},
		{"bad port", "127.0.0.1:99999", Cluster{}, `port "99999"`},
		{"routes without cluster", "", Cluster{Routes: "nats://h2:6222"}, "--routes needs --cluster"},
		{"name without cluster", "", Cluster{Name: "x"}, "--cluster-name needs --cluster"},
		{"replicas without cluster", "", Cluster{Replicas: 3}, "needs a cluster"},
		{"too many replicas", "", Cluster{Addr: "127.0.0.1:0", Server: "a", Replicas: 7}, "--replicas 7"},
		{"bad route", "", Cluster{Addr: "127.0.0.1:0", Server: "a", Routes: "http://h2"}, `"http://h2" is not a route URL`},
		{"bad cluster address", "", Cluster{Addr: "6222"}, `--cluster "6222"`},
		{"random port needs a name", "", Cluster{Addr: "127.0.0.1:0", Routes: "nats://h2:6222"}, "--server-name is needed"},
		{"cluster without routes", "", Cluster{Addr: "127.0.0.1:6222", Server: "a"}, "--cluster needs --routes"},
		{"dotted cluster name", "", Cluster{Addr: "127.0.0.1:6222", Server: "a", Routes: "nats://h2:6222", Name: "a.b"}, "no spaces, dots"},
		{"spaced server name", "", Cluster{Addr: "127.0.0.1:6222", Server: "a b", Routes: "nats://h2:6222"}, `--server-name "a b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := tt.addr
			if addr == "" {
				addr = "127.0.0.1:0"
			}
			s, err := Start(Config{Addr: addr, Data: t.TempDir(), Cluster: tt.c})
			if err == nil {
				s.Stop()
			}
			ce, ok := errors.AsType[*ConfigError](err)
			if !ok || !strings.Contains(ce.Error(), tt.want) {
				t.Errorf("Start(%+v) = %v; want a ConfigError containing %q", tt.c, err, tt.want)
			}
		})
	}
}

// TestParseRoutes: entries are trimmed, blanks skipped, and the token
// becomes the route credentials unless the URL has its own.
func TestParseRoutes(t *testing.T) {
	got, err := ParseRoutes(" nats://h1:6222, ,nats-route://u:p@h2:6223,", "tok")
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, u := range got {
		s = append(s, u.String())
	}
	want := "nats://troupe:tok@h1:6222 nats-route://u:p@h2:6223"
	if strings.Join(s, " ") != want {
		t.Errorf("ParseRoutes = %v; want %s", s, want)
	}
	got, err = ParseRoutes("nats://h1:6222", "")
	if err != nil || len(got) != 1 || got[0].User != nil {
		t.Errorf("ParseRoutes without a token = %v, %v; want one URL without credentials", got, err)
	}
}

// FuzzParseRoutes: any list either fails with a ConfigError or yields
// nats URLs that each have a host and a port.
func FuzzParseRoutes(f *testing.F) {
	for _, s := range []string{"", "nats://h2:6222", "nats://h2:6222,nats-route://h3:6223", "http://h2", "nats://:1", "nats://h", " , ", "nats://[::1]:6222", "%zz"} {
		f.Add(s, "tok")
	}
	f.Fuzz(func(t *testing.T, list, token string) {
		got, err := ParseRoutes(list, token)
		if err != nil {
			if _, ok := errors.AsType[*ConfigError](err); !ok {
				t.Fatalf("ParseRoutes(%q) = %T %v; want a ConfigError", list, err, err)
			}
			return
		}
		for _, u := range got {
			if u.Hostname() == "" || u.Port() == "" || (u.Scheme != "nats" && u.Scheme != "nats-route") {
				t.Fatalf("ParseRoutes(%q) gave %v; want a route URL with host and port", list, u)
			}
			if token != "" && u.User == nil {
				t.Fatalf("ParseRoutes(%q, %q) gave %v without credentials", list, token, u)
			}
		}
	})
}
