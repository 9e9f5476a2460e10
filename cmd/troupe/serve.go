package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"
)

// Defaults of troupe serve.
const (
	DefaultServeAddr = "127.0.0.1:4222"
	// serveMaxPayload lets a message of mailbox.MaxTextLen (1 MiB of text,
	// more once JSON-escaped) through; the NATS default is 1 MiB.
	serveMaxPayload = 8 << 20
	serveReadyWait  = 30 * time.Second
)

// serveConfig is what troupe serve runs.
type serveConfig struct {
	addr  string
	data  string
	token string
	// sync is how often JetStream flushes to disk: 0 after every write.
	sync time.Duration
	// cluster joins or forms a JetStream cluster (serve_cluster.go).
	cluster clusterConfig
}

// embeddedServer is a running NATS server with JetStream on disk.
type embeddedServer struct {
	*server.Server
	url string // nats://host:port, with the bound port
}

// startServer starts a NATS server with JetStream storing under c.data,
// listening on c.addr (port 0 picks a free one), and waits until it
// accepts connections.
func startServer(c serveConfig) (*embeddedServer, error) {
	host, portStr, err := net.SplitHostPort(c.addr)
	if err != nil {
		return nil, usagef("--addr %q: want host:port: %v", c.addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, usagef("--addr %q: port %q is not a number from 0 to 65535", c.addr, portStr)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	if host == "" {
		host = "0.0.0.0"
	}
	opts := &server.Options{
		ServerName:    "troupe",
		Host:          host,
		Port:          port,
		JetStream:     true,
		StoreDir:      c.data,
		Authorization: c.token,
		MaxPayload:    serveMaxPayload,
		SyncAlways:    c.sync == 0,
		SyncInterval:  c.sync,
		NoLog:         true,
		NoSigs:        true,
	}
	if err := c.cluster.apply(opts, c.token); err != nil {
		return nil, err
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("start NATS server on %s: %w", c.addr, err)
	}
	e := &embeddedServer{Server: s}
	go s.Start()
	if !s.ReadyForConnections(serveReadyWait) {
		e.stop()
		return nil, fmt.Errorf("start NATS server on %s (data %s): not accepting connections after %v (is the address in use?)", c.addr, c.data, serveReadyWait)
	}
	if !s.JetStreamEnabled() {
		e.stop()
		return nil, fmt.Errorf("start NATS server on %s: JetStream did not start with data folder %s", c.addr, c.data)
	}
	addr, ok := s.Addr().(*net.TCPAddr)
	if !ok {
		e.stop()
		return nil, errors.New("start NATS server: no TCP listener")
	}
	urlHost := host
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		urlHost = "127.0.0.1" // the URL this machine can use; others use its name
	}
	e.url = "nats://" + net.JoinHostPort(urlHost, strconv.Itoa(addr.Port))
	return e, nil
}

// stop shuts the server down and waits until it has.
func (e *embeddedServer) stop() {
	e.Shutdown()
	e.WaitForShutdown()
}

func (a *app) serveCommand() *cobra.Command {
	var (
		c        serveConfig
		syncFlag string
	)
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:4222] [--data DIR] [--token TOKEN] [--cluster HOST:PORT --routes URLS]",
		Short: "Run an embedded NATS server with JetStream for teams that span machines",
		Long: `Run a NATS server with JetStream, storing on disk under --data, for teams
whose members run on several machines or processes that share no folder.

It prints the URL to give to the other commands' --store (or $TROUPE_STORE)
and runs until interrupted (SIGINT, SIGTERM), then shuts down cleanly.

The default address is loopback only. To let other machines in, listen on
an address they can reach (--addr 0.0.0.0:4222) and set --token (or
$TROUPE_NATS_TOKEN), which clients pass with --nats-token. See docs/nats.md.

Every acknowledged write is flushed to disk before the acknowledgement, as
the file store does; --sync 2m (the NATS default) is faster, and a crash of
the machine may then lose the last two minutes of acknowledged writes.

With --cluster and --routes, three or more servers form one JetStream
cluster that keeps working when one of them goes; see docs/nats.md.`,
		Args: positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c.token == "" {
				c.token = a.Getenv("TROUPE_NATS_TOKEN")
			}
			switch syncFlag {
			case "always":
				c.sync = 0
			default:
				d, err := time.ParseDuration(syncFlag)
				if err != nil || d <= 0 {
					return usagef("--sync %q: want \"always\" or a positive duration such as 2m", syncFlag)
				}
				c.sync = d
			}
			if c.data == "" {
				home, err := a.home()
				if err != nil {
					return err
				}
				c.data = filepath.Join(home, "nats")
			}
			return a.serve(cmd.Context(), c)
		},
	}
	cmd.Flags().StringVar(&c.addr, "addr", DefaultServeAddr, "listen on `HOST:PORT` (port 0 picks a free port)")
	cmd.Flags().StringVar(&c.data, "data", "", "JetStream data `DIR` (default: nats under the troupe home)")
	cmd.Flags().StringVar(&c.token, "token", "", "require this auth `TOKEN` from clients (default $TROUPE_NATS_TOKEN)")
	c.cluster.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&syncFlag, "sync", "always", "flush JetStream to disk after every write (always, as the file store does), or every `DURATION` (faster; a machine crash may lose what was acknowledged since)")
	return cmd
}

// serve runs the server until ctx ends.
func (a *app) serve(ctx context.Context, c serveConfig) error {
	abs, err := filepath.Abs(c.data)
	if err != nil {
		return fmt.Errorf("--data %q: %w", c.data, err)
	}
	c.data = abs
	s, err := startServer(c)
	if err != nil {
		return err
	}
	defer s.stop()
	if host, _, _ := net.SplitHostPort(c.addr); c.token == "" && !isLoopback(host) {
		fmt.Fprintf(a.Stderr, "warning: listening on %s without --token: anyone who can reach it can read and write your teams\n", c.addr)
	}
	if a.jsonOut {
		if err := json.NewEncoder(a.Stdout).Encode(map[string]any{"url": s.url, "data": c.data, "token": c.token != ""}); err != nil {
			return err
		}
	} else {
		tokenFlag := ""
		if c.token != "" {
			tokenFlag = " --nats-token TOKEN"
		}
		if _, err := fmt.Fprintf(a.Stdout, "NATS with JetStream listening on %s (data in %s)\n%sUse it with: troupe --store %s%s ...  (or TROUPE_STORE=%s)\n", s.url, c.data, describeCluster(s.Server, c.cluster), s.url, tokenFlag, s.url); err != nil {
			return err
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); a.ensureReplicas(ctx, s.url, c.token, c.cluster) }()
	defer func() { <-done }()
	<-ctx.Done()
	fmt.Fprintln(a.Stderr, "shutting down the NATS server")
	return nil
}

// isLoopback reports whether host names only this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
