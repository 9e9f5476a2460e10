// Package servecmd is `troupe serve`: the embedded NATS JetStream server, or
// one server of a cluster, that teams spanning machines share.
package servecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/store/nats/natsserver"
)

// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).serveCommand() }

func (a *app) serveCommand() *cobra.Command {
	var (
		c        natsserver.Config
		syncFlag string
	)
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:4222] [--data DIR] [--token TOKEN] [--cluster HOST:PORT --routes URLS]",
		Short: "Run an embedded NATS server with JetStream for teams that span machines",
		Long: `Run a NATS server with JetStream, storing on disk under --data, for teams
whose members run on several machines or processes that share no folder.

It prints the URL to give to the other commands' --store (or $TROUPE_STORE)
and runs until interrupted (SIGINT, SIGTERM), then shuts down cleanly.

The default address is loopback only, and without a token it warns loudly:
every local user could then reach your teams. To let other machines in,
listen on an address they can reach (--addr 0.0.0.0:4222) and set
$TROUPE_NATS_TOKEN (or --token, which other users can read in the process
list), which clients pass with --nats-token or $TROUPE_NATS_TOKEN; beyond
loopback (--addr or --cluster) a token is required. See docs/nats.md.

Every acknowledged write is flushed to disk before the acknowledgement, as
the file store does; --sync 2m (the NATS default) is faster, and a crash of
the machine may then lose the last two minutes of acknowledged writes.

With --cluster and --routes, three or more servers form one JetStream
cluster that keeps working when one of them goes; see docs/nats.md.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c.Token == "" {
				c.Token = a.Getenv("TROUPE_NATS_TOKEN")
			}
			switch syncFlag {
			case "always":
				c.Sync = 0
			default:
				d, err := time.ParseDuration(syncFlag)
				if err != nil || d <= 0 {
					return cli.Usagef("--sync %q: want \"always\" or a positive duration such as 2m", syncFlag)
				}
				c.Sync = d
			}
			if c.Data == "" {
				home, err := a.Home()
				if err != nil {
					return err
				}
				c.Data = filepath.Join(home, "nats")
			}
			return a.serve(cmd.Context(), c)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Addr, "addr", natsserver.DefaultAddr, "listen on `HOST:PORT` (port 0 picks a free port)")
	f.StringVar(&c.Data, "data", "", "JetStream data `DIR` (default: nats under the troupe home)")
	f.StringVar(&c.Token, "token", "", "require this auth `TOKEN` from clients (default $TROUPE_NATS_TOKEN)")
	f.StringVar(&c.Cluster.Addr, "cluster", "", "join or form a JetStream cluster, listening for routes from the other servers on `HOST:PORT` (e.g. 0.0.0.0:6222)")
	f.StringVar(&c.Cluster.Routes, "routes", "", "route `URLS` of the other servers, comma-separated (nats://h2:6222,nats://h3:6222); listing this server too is fine")
	f.StringVar(&c.Cluster.Name, "cluster-name", "", "name of the cluster; every server of it uses the same (default "+natsserver.DefaultClusterName+")")
	f.StringVar(&c.Cluster.Server, "server-name", "", "this server's `NAME`, unique in the cluster and the same across restarts (default: the host name and the route port)")
	f.IntVar(&c.Cluster.Replicas, "replicas", 0, "give troupe's streams and buckets `N` replicas (1-5), changing existing ones; default: clients create them with 3 on a cluster of 3 or more servers, else 1, and keep existing counts")
	f.StringVar(&syncFlag, "sync", "always", "flush JetStream to disk after every write (always, as the file store does), or every `DURATION` (faster; a machine crash may lose what was acknowledged since)")
	return cmd
}

// checkAuth refuses to listen beyond loopback (for clients, or for the
// routes of a cluster) without a token: anyone who reached it could read
// and write every team.
func checkAuth(c natsserver.Config) error {
	if c.Token != "" {
		return nil
	}
	for _, l := range []struct{ flag, addr string }{{"--addr", c.Addr}, {"--cluster", c.Cluster.Addr}} {
		if l.addr == "" {
			continue
		}
		host, _, err := net.SplitHostPort(l.addr)
		if err != nil {
			continue // natsserver.Start names the flag
		}
		if !natsserver.IsLoopback(host) {
			where := host
			if where == "" {
				where = "every interface"
			}
			return cli.Usagef("%s %s listens on %s, beyond this machine, without a token: anyone who can reach it could read and write your teams; set $TROUPE_NATS_TOKEN (or --token) and give it to the clients, or listen on 127.0.0.1", l.flag, l.addr, where)
		}
	}
	return nil
}

// serve runs the server until ctx ends.
func (a *app) serve(ctx context.Context, c natsserver.Config) error {
	abs, err := filepath.Abs(c.Data)
	if err != nil {
		return fmt.Errorf("--data %q: %w", c.Data, err)
	}
	c.Data = abs
	if err := checkAuth(c); err != nil {
		return err
	}
	if c.Token == "" {
		fmt.Fprintf(a.Stderr, "WARNING: troupe serve runs WITHOUT A TOKEN: every user and process on this machine can read and write your teams (their messages, tasks and permission answers) through %s. Set $TROUPE_NATS_TOKEN (clients: --nats-token or $TROUPE_NATS_TOKEN).\n", c.Addr)
	}
	s, err := natsserver.Start(c)
	if ce, ok := errors.AsType[*natsserver.ConfigError](err); ok {
		return &cli.UsageError{Err: ce.Err}
	} else if err != nil {
		return err
	}
	defer s.Stop()
	if a.JSON {
		if err := json.NewEncoder(a.Stdout).Encode(map[string]any{"url": s.URL, "data": c.Data, "token": c.Token != ""}); err != nil {
			return err
		}
	} else {
		tokenFlag := ""
		if c.Token != "" {
			tokenFlag = " --nats-token TOKEN"
		}
		if _, err := fmt.Fprintf(a.Stdout, "NATS with JetStream listening on %s (data in %s)\n%sUse it with: troupe --store %s%s ...  (or TROUPE_STORE=%s)\n", s.URL, c.Data, s.Describe(c.Cluster), s.URL, tokenFlag, s.URL); err != nil {
			return err
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); a.ensureReplicas(ctx, s.URL, c.Token, c.Cluster.Replicas) }()
	defer func() { <-done }()
	<-ctx.Done()
	fmt.Fprintln(a.Stderr, "shutting down the NATS server")
	return nil
}

// ensureReplicas gives troupe's streams and buckets n replicas on the
// server at url (none when n is 0), reporting on stdout when done and on
// stderr every ten seconds while the cluster cannot place them yet.
func (a *app) ensureReplicas(ctx context.Context, url, token string, n int) {
	if n == 0 {
		return
	}
	opts := natsstore.Options{
		Token:     token,
		Namespace: a.StoreFlags.Namespace,
		Replicas:  n,
		Name:      "troupe serve",
		// Short attempts: EnsureReplicas retries while the cluster forms.
		RequestTimeout: 2 * time.Second,
		ConnectTimeout: 2 * time.Second,
		Logger:         slog.New(slog.DiscardHandler),
	}
	if opts.Namespace == "" {
		opts.Namespace = a.Getenv("TROUPE_NATS_NAMESPACE")
	}
	var told time.Time
	err := natsserver.EnsureReplicas(ctx, url, opts, func(err error) {
		if time.Since(told) >= 10*time.Second {
			fmt.Fprintf(a.Stderr, "waiting to give troupe's streams %d replicas: %v\n", n, err)
			told = time.Now()
		}
	})
	if err == nil {
		out := a.Stdout
		if a.JSON {
			out = a.Stderr
		}
		fmt.Fprintf(out, "troupe's streams and buckets have %d replicas\n", n)
	}
}
