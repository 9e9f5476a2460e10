package nats

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// How many copies of troupe's streams and buckets a cluster keeps.
//
// Options.Replicas == 0 (auto) creates missing streams with 3 replicas when
// the server the store connected to is part of a cluster of 3 or more
// servers (counted from the URLs given and those the cluster's INFO
// announced), else with 1; streams that exist keep their count. A positive
// Options.Replicas creates missing streams with that count and changes
// existing ones to it, so an installation grows from one server to three
// by reopening once with Replicas 3 (troupe serve --replicas 3).

// chooseReplicas sets s.replicas and s.resize from the options and the
// connection; Open calls it once connected.
func (s *Store) chooseReplicas() {
	if s.opts.Replicas > 0 {
		s.replicas, s.resize = s.opts.Replicas, true
		return
	}
	s.replicas = autoReplicas(s.nc.ConnectedClusterName(), s.nc.Servers())
}

// autoReplicas returns 3 for a named cluster of at least three known
// servers, else 1. servers are client URLs, deduplicated by host and port.
func autoReplicas(cluster string, servers []string) int {
	if cluster == "" || countServers(servers) < 3 {
		return 1
	}
	return 3
}

// countServers counts distinct host:port pairs among NATS URLs (a URL
// without a port means the default 4222).
func countServers(servers []string) int {
	seen := map[string]bool{}
	for _, raw := range servers {
		raw = strings.TrimSpace(raw)
		if !strings.Contains(raw, "://") {
			raw = "nats://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			continue
		}
		port := u.Port()
		if port == "" {
			port = "4222"
		}
		seen[strings.ToLower(u.Hostname())+":"+port] = true
	}
	return len(seen)
}

// Replicas returns the replica count the store creates streams with (and,
// when Options.Replicas asked for one, sets on existing streams).
func (s *Store) Replicas() int { return s.replicas }

// replicasFor returns the replica count to configure a stream with whose
// current configuration is cur (nil when it does not exist yet): the
// asked-for count, else the existing one, else the automatic one.
func (s *Store) replicasFor(cur *jetstream.StreamConfig) int {
	if cur != nil && !s.resize && cur.Replicas > 0 {
		return cur.Replicas
	}
	return s.replicas
}

// fitReplicas changes an existing stream's replica count to the one
// Options.Replicas asked for; without a request it leaves it alone.
func (s *Store) fitReplicas(ctx context.Context, str jetstream.Stream) (jetstream.Stream, error) {
	cfg := str.CachedInfo().Config
	if !s.resize || cfg.Replicas == s.replicas {
		return str, nil
	}
	from := cfg.Replicas
	cfg.Replicas = s.replicas
	up, err := s.js.UpdateStream(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("stream %s: change replicas from %d to %d: %w", cfg.Name, from, s.replicas, replicaHint(err))
	}
	s.log.Info("nats store: changed replicas", "stream", cfg.Name, "from", from, "to", s.replicas)
	return up, nil
}

// replicaHint explains the server's refusals of a replica count.
func replicaHint(err error) error {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return err
	}
	switch apiErr.ErrorCode {
	case 10074: // replicas > 1 not supported in non-clustered mode
		return fmt.Errorf("%w (this server is not part of a JetStream cluster: use 1 replica)", err)
	case 10023, 10005: // insufficient resources, no suitable peers
		if strings.Contains(apiErr.Description, "offline") {
			return fmt.Errorf("%w (a server of the cluster is down or has not reported to the cluster's leader yet: retry once every server is up)", err)
		}
		return fmt.Errorf("%w (the cluster has fewer JetStream servers than replicas asked for)", err)
	}
	return err
}
