package main

import (
	"fmt"
	"net"
	"strings"
	"testing"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// TestServeCluster forms a three-server cluster with troupe serve
// (--cluster, --routes, --server-name, --replicas 3), uses it through
// --store with every URL, stops the first server and keeps working.
func TestServeCluster(t *testing.T) {
	h := &harness{t: t, home: t.TempDir(), env: map[string]string{"TROUPE_NATS_TOKEN": "tok"}}
	var urls, routes []string
	ports := freePorts(t, 3)
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var stops []func() error
	for i, name := range []string{"n1", "n2", "n3"} {
		// Every server gets the same --routes, itself included.
		args := []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--token", "tok",
			"--cluster", fmt.Sprintf("127.0.0.1:%d", ports[i]), "--server-name", name, "--cluster-name", "crew-cluster",
			"--routes", strings.Join(routes, ",")}
		if i == 2 {
			args = append(args, "--replicas", "3")
		}
		out := newSyncBuffer()
		stop := h.runAsync(out, args...)
		stops = append(stops, stop)
		text := out.waitFor(t, name+"'s URL", func(s string) bool { return strings.Contains(s, "Use it with") })
		if !strings.Contains(text, "Server "+name+" in cluster crew-cluster") {
			t.Errorf("troupe serve printed no cluster line for %s:\n%s", name, text)
		}
		url := natsURL.FindString(text)
		if url == "" || !strings.Contains(text, fmt.Sprintf("routes on 127.0.0.1:%d", ports[i])) {
			t.Fatalf("troupe serve printed no URL or route address:\n%s", text)
		}
		urls = append(urls, url)
		if i == 2 {
			out.waitFor(t, "the replicas", func(s string) bool { return strings.Contains(s, "have 3 replicas") })
		}
	}
	defer func() {
		for _, stop := range stops[1:] {
			stop()
		}
	}()
	store := strings.Join(urls, ",")
	h.env["TROUPE_STORE"] = store
	h.roster()
	h.ok("inbox", "send", "--team", "alpha", "--to", "bob", "--from", "alice", "before the loss")

	nc, err := natsgo.Connect(urls[1], natsgo.Token("tok"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	for _, name := range []string{"troupe_v1_mail", "KV_troupe_v1_teams", "KV_troupe_v1_tasks", "troupe_v1_jobs"} {
		str, err := js.Stream(t.Context(), name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		if got := str.CachedInfo().Config.Replicas; got != 3 {
			t.Errorf("stream %s has %d replicas; want 3", name, got)
		}
	}

	if err := stops[0](); err != nil {
		t.Fatalf("stopping n1: %v", err)
	}
	h.ok("inbox", "send", "--team", "alpha", "--to", "bob", "--from", "alice", "after the loss")
	out := h.ok("inbox", "read", "--team", "alpha", "--agent", "bob")
	for _, want := range []string{"before the loss", "after the loss"} {
		if strings.Count(out, want) != 1 {
			t.Errorf("inbox read with n1 down = %q; want %q once", out, want)
		}
	}
}

// TestServeClusterFlags: cluster flags that cannot work are usage errors
// naming the flag (the cases are natsserver's TestConfigErrors).
func TestServeClusterFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"routes without cluster", []string{"--routes", "nats://h2:6222"}, "--routes needs --cluster"},
		{"bad route", []string{"--cluster", "127.0.0.1:0", "--server-name", "a", "--routes", "http://h2"}, `"http://h2" is not a route URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &harness{t: t, home: t.TempDir()}
			err := h.fail(append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tt.args...)...)
			if !isUsage(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("serve %v error = %v; want a usage error containing %q", tt.args, err, tt.want)
			}
		})
	}
}
