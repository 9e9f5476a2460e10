package natsserver

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// DefaultClusterName names the JetStream cluster troupe serve forms.
const DefaultClusterName = "troupe"

// routeUser is the user name routes authenticate with; the token is its
// password.
const routeUser = "troupe"

// Cluster is how a server joins or forms a JetStream cluster. The zero
// value runs a single server.
type Cluster struct {
	// Name of the cluster (--cluster-name); default DefaultClusterName.
	Name string
	// Addr is the route listener, HOST:PORT (--cluster).
	Addr string
	// Routes are the other servers' route URLs, comma-separated
	// (--routes); listing this server too is fine.
	Routes string
	// Server is this server's name (--server-name): unique in the cluster
	// and stable across restarts. Default: the host name and route port.
	Server string
	// Replicas, when positive, is the replica count to give troupe's
	// streams and buckets once the cluster can place them (--replicas).
	Replicas int
}

// Clustered reports whether the server runs as part of a cluster.
func (c Cluster) Clustered() bool { return c.Addr != "" }

// apply validates c and sets the cluster options of a server that
// authenticates clients (and, then, routes) with token.
func (c Cluster) apply(opts *server.Options, token string) error {
	if c.Replicas < 0 || c.Replicas > 5 {
		return configErrorf("--replicas %d: want 1-5", c.Replicas)
	}
	if !c.Clustered() {
		for _, f := range []struct{ flag, v string }{{"--routes", c.Routes}, {"--cluster-name", c.Name}} {
			if f.v != "" {
				return configErrorf("%s needs --cluster HOST:PORT (the route listener)", f.flag)
			}
		}
		if c.Replicas > 1 {
			return configErrorf("--replicas %d needs a cluster (--cluster and --routes): one server keeps one copy", c.Replicas)
		}
		if c.Server != "" {
			opts.ServerName = c.Server
		}
		return nil
	}
	host, port, err := splitHostPort("--cluster", c.Addr)
	if err != nil {
		return err
	}
	routes, err := ParseRoutes(c.Routes, token)
	if err != nil {
		return err
	}
	if len(routes) == 0 {
		return configErrorf("--cluster needs --routes naming the cluster's servers (the same list on every server, itself included, is fine)")
	}
	name := c.Name
	if name == "" {
		name = DefaultClusterName
	}
	if strings.ContainsAny(name, " \t.*>") {
		return configErrorf("--cluster-name %q: no spaces, dots or wildcards", name)
	}
	srv := c.Server
	if srv == "" && port == 0 {
		return configErrorf("--server-name is needed with a random route port (--cluster %s): JetStream knows a server by its name across restarts", c.Addr)
	}
	if srv == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return configErrorf("--server-name is needed: the host name is unknown (%v)", err)
		}
		srv = h + "-" + strconv.Itoa(port)
	}
	if strings.ContainsAny(srv, " \t") {
		return configErrorf("--server-name %q: no spaces", srv)
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

// ParseRoutes parses a comma-separated list of route URLs (--routes),
// refusing (by name) any entry that is not a nats:// or nats-route:// URL
// with a host and port, and adds the route credentials when token is set.
func ParseRoutes(list, token string) ([]*url.URL, error) {
	var out []*url.URL
	for raw := range strings.SplitSeq(list, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || u.Port() == "" || (u.Scheme != "nats" && u.Scheme != "nats-route") {
			return nil, configErrorf("--routes: %q is not a route URL such as nats://h2:6222", raw)
		}
		if token != "" && u.User == nil {
			u.User = url.UserPassword(routeUser, token)
		}
		out = append(out, u)
	}
	return out, nil
}

// Describe returns what the started server shows of its cluster c, for
// troupe serve's first lines; empty for a single server.
func (s *Server) Describe(c Cluster) string {
	if !c.Clustered() {
		return ""
	}
	addr := c.Addr
	if ca := s.ClusterAddr(); ca != nil {
		addr = ca.String()
	}
	return fmt.Sprintf("Server %s in cluster %s, routes on %s\n", s.Name(), s.ClusterName(), addr)
}
