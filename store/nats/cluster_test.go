package nats_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// testCluster is three in-process NATS servers with JetStream, routed to
// each other on loopback, forming one JetStream cluster.
type testCluster struct {
	nodes []*clusterNode
}

// clusterNode is one server of a testCluster; it keeps its ports and
// folder across a restart.
type clusterNode struct {
	*server.Server
	name        string
	dir         string
	port        int // client port
	clusterPort int
}

// startCluster starts a three-node cluster for t and waits until its
// JetStream has a meta leader; the servers are shut down when t ends.
func startCluster(t testing.TB) *testCluster {
	t.Helper()
	c := &testCluster{}
	// JetStream clustering needs every server's routes from the start, so
	// the route ports are chosen before any server starts.
	for i, p := range freePorts(t, 3) {
		c.nodes = append(c.nodes, &clusterNode{name: fmt.Sprintf("n%d", i+1), dir: t.TempDir(), port: -1, clusterPort: p})
	}
	for _, n := range c.nodes {
		c.start(t, n)
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			n.stop()
		}
	})
	c.waitMetaLeader(t)
	return c
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// start starts n routed to every other node.
func (c *testCluster) start(t testing.TB, n *clusterNode) {
	t.Helper()
	var routes []string
	for _, o := range c.nodes {
		if o != n {
			routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", o.clusterPort))
		}
	}
	opts := &server.Options{
		ServerName: n.name,
		Host:       "127.0.0.1",
		Port:       n.port,
		JetStream:  true,
		StoreDir:   n.dir,
		NoLog:      true,
		NoSigs:     true,
		Cluster: server.ClusterOpts{
			Name: "troupe-test",
			Host: "127.0.0.1",
			Port: n.clusterPort,
		},
		Routes: server.RoutesFromStr(strings.Join(routes, ",")),
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("start %s: %v", n.name, err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		t.Fatalf("%s not ready within 30s", n.name)
	}
	n.Server = s
	n.port = s.Addr().(*net.TCPAddr).Port
	n.clusterPort = s.ClusterAddr().Port
}

// stop shuts n down and waits for it; a stopped node stays stopped.
func (n *clusterNode) stop() {
	if n.Server != nil {
		n.Shutdown()
		n.WaitForShutdown()
		n.Server = nil
	}
}

func (n *clusterNode) running() bool { return n.Server != nil }

// urls returns every node's client URL, comma-separated, as --store takes it.
func (c *testCluster) urls() string {
	var us []string
	for _, n := range c.nodes {
		us = append(us, fmt.Sprintf("nats://127.0.0.1:%d", n.port))
	}
	return strings.Join(us, ",")
}

// waitMetaLeader waits until a running node leads JetStream's meta group,
// every running node is current with it, and the leader counts every
// running node as an online peer: until a node's first statistics reach the
// leader, a stream with one replica per node cannot be placed ("no suitable
// peers for placement, peer offline").
func (c *testCluster) waitMetaLeader(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		running := 0
		for _, n := range c.nodes {
			if n.running() {
				running++
			}
		}
		leader, current := false, true
		for _, n := range c.nodes {
			if !n.running() {
				continue
			}
			if n.JetStreamIsLeader() {
				leader = len(n.JetStreamClusterPeers()) >= running
			}
			current = current && n.JetStreamIsCurrent()
		}
		if leader && current {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no JetStream meta leader within 30s")
}

// streamLeader returns the node leading stream (in the global account),
// waiting for one.
func (c *testCluster) streamLeader(t testing.TB, stream string) *clusterNode {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range c.nodes {
			if n.running() && n.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
				return n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("stream %s has no leader within 30s", stream)
	return nil
}

// moveLeader steps stream's leader down until node leads it.
func (c *testCluster) moveLeader(t testing.TB, stream string, to *clusterNode) {
	t.Helper()
	for range 20 {
		l := c.streamLeader(t, stream)
		if l == to {
			return
		}
		if err := l.JetStreamStepdownStream(server.DEFAULT_GLOBAL_ACCOUNT, stream); err != nil {
			t.Fatalf("step down %s on %s: %v", stream, l.name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("could not move the leader of %s to %s", stream, to.name)
}

// waitCurrent waits until every running node has caught up on stream.
func (c *testCluster) waitCurrent(t testing.TB, stream string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ok := true
		for _, n := range c.nodes {
			ok = ok && n.running() && n.JetStreamIsStreamCurrent(server.DEFAULT_GLOBAL_ACCOUNT, stream)
		}
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("stream %s not current on every node within 30s", stream)
}

// moveLeaderOff steps stream's leader down while n leads it, as an
// operator's rolling restart does before stopping a server.
func (c *testCluster) moveLeaderOff(t testing.TB, stream string, n *clusterNode) {
	t.Helper()
	for range 20 {
		if !n.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return
		}
		if err := n.JetStreamStepdownStream(server.DEFAULT_GLOBAL_ACCOUNT, stream); err != nil {
			t.Fatalf("step down %s on %s: %v", stream, n.name, err)
		}
		c.streamLeader(t, stream)
	}
	t.Fatalf("could not move the leader of %s off %s", stream, n.name)
}
