package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/pflag"

	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// DefaultClusterName names the JetStream cluster troupe serve forms.
const DefaultClusterName = "troupe"

// clusterConfig is how troupe serve joins or forms a JetStream cluster.
// The zero value runs a single server.
type clusterConfig struct {
	name   string // --cluster-name
	addr   string // --cluster: the route listener, HOST:PORT
	routes string // --routes: other servers' route URLs, comma-separated
	server string // --server-name: unique in the cluster and stable across restarts
	// replicas, when positive, is the replica count troupe serve gives
	// troupe's streams and buckets once the cluster can place them.
	replicas int
}

func (c *clusterConfig) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.addr, "cluster", "", "join or form a JetStream cluster, listening for routes from the other servers on `HOST:PORT` (e.g. 0.0.0.0:6222)")
	fs.StringVar(&c.routes, "routes", "", "route `URLS` of the other servers, comma-separated (nats://h2:6222,nats://h3:6222); listing this server too is fine")
	fs.StringVar(&c.name, "cluster-name", "", "name of the cluster; every server of it uses the same (default "+DefaultClusterName+")")
	fs.StringVar(&c.server, "server-name", "", "this server's `NAME`, unique in the cluster and the same across restarts (default: the host name and the route port)")
	fs.IntVar(&c.replicas, "replicas", 0, "give troupe's streams and buckets `N` replicas (1-5), changing existing ones; default: clients create them with 3 on a cluster of 3 or more servers, else 1, and keep existing counts")
}

// clustered reports whether the server runs as part of a cluster.
func (c clusterConfig) clustered() bool { return c.addr != "" }

// apply validates c and sets the cluster options of a server that
// authenticates clients (and, then, routes) with token.
func (c clusterConfig) apply(opts *server.Options, token string) error {
	if c.replicas < 0 || c.replicas > 5 {
		return usagef("--replicas %d: want 1-5", c.replicas)
	}
	if !c.clustered() {
		for flag, v := range map[string]string{"--routes": c.routes, "--cluster-name": c.name} {
			if v != "" {
				return usagef("%s needs --cluster HOST:PORT (the route listener)", flag)
			}
		}
		if c.replicas > 1 {
			return usagef("--replicas %d needs a cluster (--cluster and --routes): one server keeps one copy", c.replicas)
		}
		if c.server != "" {
			opts.ServerName = c.server
		}
		return nil
	}
	host, port, err := splitHostPort("--cluster", c.addr)
	if err != nil {
		return err
	}
	routes, err := parseRoutes(c.routes, token)
	if err != nil {
		return err
	}
	if len(routes) == 0 {
		return usagef("--cluster needs --routes naming the cluster's servers (the same list on every server, itself included, is fine)")
	}
	name := c.name
	if name == "" {
		name = DefaultClusterName
	}
	if strings.ContainsAny(name, " \t.*>") {
		return usagef("--cluster-name %q: no spaces, dots or wildcards", name)
	}
	srv := c.server
	if srv == "" && port == 0 {
		return usagef("--server-name is needed with a random route port (--cluster %s): JetStream knows a server by its name across restarts", c.addr)
	}
	if srv == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return usagef("--server-name is needed: the host name is unknown (%v)", err)
		}
		srv = h + "-" + strconv.Itoa(port)
	}
	if strings.ContainsAny(srv, " \t") {
		return usagef("--server-name %q: no spaces", srv)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts.ServerName = srv
	opts.Cluster = server.ClusterOpts{Name: name, Host: host, Port: port}
	if token != "" {
		// One secret: the servers of the cluster route to each other with
		// the clients' token.
		opts.Cluster.Username, opts.Cluster.Password = routeUser, token
	}
	opts.Routes = routes
	return nil
}

// routeUser is the user name routes authenticate with; the token is its
// password.
const routeUser = "troupe"

// splitHostPort parses a HOST:PORT flag value; an empty host means every
// interface.
func splitHostPort(flag, addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, usagef("%s %q: want HOST:PORT: %v", flag, addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, usagef("%s %q: port %q is not a number from 0 to 65535", flag, addr, portStr)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

// parseRoutes parses --routes, refusing (by name) any entry that is not a
// nats:// or nats-route:// URL with a host and port, and adds the route
// credentials.
func parseRoutes(list, token string) ([]*url.URL, error) {
	var out []*url.URL
	for _, raw := range strings.Split(list, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || u.Port() == "" || (u.Scheme != "nats" && u.Scheme != "nats-route") {
			return nil, usagef("--routes: %q is not a route URL such as nats://h2:6222", raw)
		}
		if token != "" && u.User == nil {
			u.User = url.UserPassword(routeUser, token)
		}
		out = append(out, u)
	}
	return out, nil
}

// describeCluster returns what the started server shows of its cluster,
// for troupe serve's first lines; empty for a single server.
func describeCluster(s *server.Server, c clusterConfig) string {
	if !c.clustered() {
		return ""
	}
	addr := c.addr
	if ca := s.ClusterAddr(); ca != nil {
		addr = ca.String()
	}
	return fmt.Sprintf("Server %s in cluster %s, routes on %s\n", s.Name(), s.ClusterName(), addr)
}

// ensureReplicas gives troupe's streams and buckets c.replicas replicas on
// the server at url, retrying every second while the cluster cannot place
// them yet (servers still joining), until ctx ends. It reports on stdout
// when done and on stderr every ten seconds while waiting.
func (a *app) ensureReplicas(ctx context.Context, url, token string, c clusterConfig) {
	if c.replicas == 0 {
		return
	}
	opts := natsstore.Options{
		Token:     token,
		Namespace: a.storeSel.namespace,
		Replicas:  c.replicas,
		Name:      "troupe serve",
		// Short attempts: the loop below retries while the cluster forms.
		RequestTimeout: 2 * time.Second,
		ConnectTimeout: 2 * time.Second,
		Logger:         slog.New(slog.DiscardHandler),
	}
	if opts.Namespace == "" {
		opts.Namespace = a.Getenv("TROUPE_NATS_NAMESPACE")
	}
	out := a.Stdout
	if a.jsonOut {
		out = a.Stderr
	}
	var told time.Time
	for {
		err := setReplicas(ctx, url, opts)
		if err == nil {
			fmt.Fprintf(out, "troupe's streams and buckets have %d replicas\n", c.replicas)
			return
		}
		if time.Since(told) >= 10*time.Second {
			fmt.Fprintf(a.Stderr, "waiting to give troupe's streams %d replicas: %v\n", c.replicas, err)
			told = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// setReplicas opens the store (and its remote-job streams) with opts, which
// creates or changes every stream and bucket to opts.Replicas.
func setReplicas(ctx context.Context, url string, opts natsstore.Options) error {
	s, err := natsstore.Open(ctx, url, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Jobs(ctx, natsstore.JobOptions{})
	return err
}
