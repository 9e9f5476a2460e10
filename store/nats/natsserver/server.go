package natsserver

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Defaults of troupe serve.
const (
	// DefaultAddr listens on loopback only.
	DefaultAddr = "127.0.0.1:4222"
	// MaxPayload lets a message of mailbox.MaxTextLen (1 MiB of text, more
	// once JSON-escaped) through; the NATS default is 1 MiB.
	MaxPayload = 8 << 20
	// DefaultReadyWait is Config.ReadyWait's default.
	DefaultReadyWait = 30 * time.Second
)

// Config is what a Server runs.
type Config struct {
	// Addr is HOST:PORT to listen on; port 0 picks a free one and an
	// empty host means every interface.
	Addr string
	// Data is the JetStream storage folder.
	Data string
	// Token, when set, is required from clients (and from routes).
	Token string
	// Sync is how often JetStream flushes to disk: 0 after every write.
	Sync time.Duration
	// Cluster joins or forms a JetStream cluster; its zero value runs a
	// single server.
	Cluster Cluster
	// ReadyWait bounds how long Start waits for the server to accept
	// connections (a taken address shows only as this wait running out).
	// Default DefaultReadyWait.
	ReadyWait time.Duration
}

// ConfigError is a configuration that cannot work. Its text names the
// troupe serve flag at fault.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, args...)}
}

// Server is a running NATS server with JetStream on disk.
type Server struct {
	*server.Server
	// URL is nats://host:port with the bound port: the address this
	// machine can use (loopback when listening on every interface).
	URL string
}

// Start starts a NATS server with JetStream storing under c.Data,
// listening on c.Addr, and waits until it accepts connections.
func Start(c Config) (*Server, error) {
	host, port, err := splitHostPort("--addr", c.Addr)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		port = server.RANDOM_PORT
	} else if err := checkFree(host, port); err != nil {
		// The server itself shows a taken address only as never becoming
		// ready: say so now, not after ReadyWait.
		return nil, fmt.Errorf("start NATS server: --addr %s: %w", c.Addr, err)
	}
	opts := &server.Options{
		ServerName:    "troupe",
		Host:          host,
		Port:          port,
		JetStream:     true,
		StoreDir:      c.Data,
		Authorization: c.Token,
		MaxPayload:    MaxPayload,
		SyncAlways:    c.Sync == 0,
		SyncInterval:  c.Sync,
		NoLog:         true,
		NoSigs:        true,
	}
	if err := c.Cluster.apply(opts, c.Token); err != nil {
		return nil, err
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("start NATS server on %s: %w", c.Addr, err)
	}
	e := &Server{Server: s}
	wait := c.ReadyWait
	if wait <= 0 {
		wait = DefaultReadyWait
	}
	go s.Start()
	if !s.ReadyForConnections(wait) {
		e.Stop()
		return nil, fmt.Errorf("start NATS server on %s (data %s): not accepting connections after %v (is the address in use?)", c.Addr, c.Data, wait)
	}
	if !s.JetStreamEnabled() {
		e.Stop()
		return nil, fmt.Errorf("start NATS server on %s: JetStream did not start with data folder %s", c.Addr, c.Data)
	}
	addr, ok := s.Addr().(*net.TCPAddr)
	if !ok {
		e.Stop()
		return nil, errors.New("start NATS server: no TCP listener")
	}
	urlHost := host
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		urlHost = "127.0.0.1" // the URL this machine can use; others use its name
	}
	e.URL = "nats://" + net.JoinHostPort(urlHost, strconv.Itoa(addr.Port))
	return e, nil
}

// Stop shuts the server down and waits until it has.
func (s *Server) Stop() {
	s.Shutdown()
	s.WaitForShutdown()
}

// IsLoopback reports whether host names only this machine.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// splitHostPort parses a HOST:PORT flag value; an empty host means every
// interface.
func splitHostPort(flag, addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, configErrorf("%s %q: want HOST:PORT: %v", flag, addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, configErrorf("%s %q: port %q is not a number from 0 to 65535", flag, addr, portStr)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

// checkFree reports an error when host:port cannot be listened on now
// (another server holds it): the address is tried and let go at once.
func checkFree(host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return errors.New("the address is in use (another troupe serve or NATS server?)")
		}
		return err
	}
	return l.Close()
}
