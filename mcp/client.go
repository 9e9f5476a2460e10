package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/troupe-dev/troupe/internal/procgroup"
)

// Defaults of Options.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 10 * time.Minute
	DefaultStopTimeout  = 2 * time.Second
	// stderrTail is how much of a stdio server's stderr is kept for
	// failure reports.
	stderrTail = 2048
)

// ErrClosed is returned by calls after Manager.Close.
var ErrClosed = errors.New("mcp: manager closed")

// Options configure Start.
type Options struct {
	// StartTimeout bounds each server's start (connect, initialize, list
	// tools): MCP_TIMEOUT. Zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// CallTimeout bounds each tool call: MCP_TOOL_TIMEOUT. Zero means
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// StopTimeout is how long a stdio server has to exit after its stdin
	// is closed before it is sent SIGTERM (and as long again before
	// SIGKILL). Zero means DefaultStopTimeout.
	StopTimeout time.Duration
	// Dir is the working folder of stdio servers; empty means ours.
	Dir string
	// Environ is the environment stdio servers inherit (each server's env
	// is added to it); nil means os.Environ().
	Environ []string
	// Lookup resolves ${VAR} in the configuration; nil means
	// os.LookupEnv.
	Lookup func(string) (string, bool)
	// HTTPClient carries http and sse servers' requests; nil means a
	// client of its own. The servers' headers are added to each request.
	HTTPClient *http.Client
}

// State is where a server stands.
type State string

// The states of a server.
const (
	StateConnected State = "connected"
	StateFailed    State = "failed"
)

// Status is one server's state for people: /mcp, troupe mcp list, and
// the warnings printed when a server fails.
type Status struct {
	Name    string
	Kind    string // stdio, http or sse
	Target  string // the command line or the url
	State   State
	Err     error    // why it failed; nil when connected
	Tools   []string // the tools' full names (mcp__server__tool)
	Restart int      // how many times it was restarted
}

// Manager owns the connections to a set of MCP servers.
type Manager struct {
	opts    Options
	servers []*server // in configuration order; fixed after Start

	mu     sync.Mutex
	closed bool // guarded by mu

}

// Start connects to every server in parallel and returns once each has
// connected or failed (each within opts.StartTimeout, or ctx). A failure
// of one server does not stop the others: it is in Status. Configuration
// errors (an unset variable) are failures of their server too.
func Start(ctx context.Context, servers []Server, opts Options) *Manager {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	if opts.Lookup == nil {
		opts.Lookup = os.LookupEnv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	m := &Manager{opts: opts}
	var wg sync.WaitGroup
	for _, cfg := range servers {
		s := &server{m: m, cfg: cfg}
		m.servers = append(m.servers, s)
		wg.Go(func() { s.start(ctx) })
	}
	wg.Wait()
	return m
}

// Status returns every server's state, in configuration order.
func (m *Manager) Status() []Status {
	out := make([]Status, len(m.servers))
	for i, s := range m.servers {
		out[i] = s.status()
	}
	return out
}

// Close ends every connection, in parallel: a stdio server gets its stdin
// closed, then SIGTERM after StopTimeout and SIGKILL after as long again.
// It is idempotent.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	// In parallel: a server that ignores the end of its stdin costs
	// StopTimeout, once rather than once per server.
	errs := make([]error, len(m.servers))
	var wg sync.WaitGroup
	for i, s := range m.servers {
		wg.Go(func() { errs[i] = s.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// server is one configured server and its current connection.
type server struct {
	m   *Manager
	cfg Server

	// mu guards the fields below; it is not held across I/O.
	mu       sync.Mutex
	session  *sdk.ClientSession
	stderr   *tail     // the current process's stderr (stdio)
	cmd      *exec.Cmd // the current process (stdio), whose group Close ends
	tools    []*sdk.Tool
	caps     *sdk.ServerCapabilities
	endLife  context.CancelCauseFunc // ends the current connection's context
	err      error                   // the last start failure; nil while connected
	restarts int
	// restarting is closed when a restart in progress ends.
	restarting chan struct{}
	// watches are the WatchResource calls under way (watch.go).
	watches map[*resourceWatch]bool
}

// target returns the command line or url of s, for messages.
func (s *server) target() string {
	if s.cfg.Kind() == TypeStdio {
		return strings.TrimSpace(s.cfg.Command + " " + strings.Join(s.cfg.Args, " "))
	}
	return s.cfg.URL
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Kind: s.cfg.Kind(), Target: s.target(), State: StateConnected, Err: s.err, Restart: s.restarts}
	if s.err != nil || s.session == nil {
		st.State = StateFailed
	}
	for _, t := range s.tools {
		st.Tools = append(st.Tools, ToolName(s.cfg.Name, t.Name))
	}
	return st
}

// start connects s, recording the session or the failure.
func (s *server) start(ctx context.Context) {
	sess, tail, tools, caps, err := s.connect(ctx)
	if err == nil && s.m.isClosed() { // Close ran while it started
		sess.Close()
		s.mu.Lock()
		s.endLife(ErrClosed)
		s.session, s.err = nil, ErrClosed
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	s.session, s.stderr, s.err = sess, tail, err
	if err == nil {
		s.tools, s.caps = tools, caps
	}
	s.mu.Unlock()
}

// MaxListed bounds the tools, and the resources, taken from one server's
// paged lists.
const MaxListed = 1000

// httpResumes bounds the reconnections that resume one interrupted
// streamable HTTP event stream (after 1 s, then 1.5 s, or the server's
// retry field).
const httpResumes = 2

// connect starts the server, initializes and lists its tools, all within
// the start timeout.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, *tail, []*sdk.Tool, *sdk.ServerCapabilities, error) {
	cfg, err := s.cfg.Expand(s.m.opts.Lookup)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if cfg.HeadersHelper != "" || len(cfg.OAuth) > 0 {
		return nil, nil, nil, nil, s.startError(errors.New("headersHelper and oauth (Claude Code settings) are not supported by troupe: give the headers in \"headers\""), nil)
	}
	timeout := fmt.Errorf("no answer within %v (MCP_TIMEOUT)", s.m.opts.StartTimeout)
	// The SSE transport keeps its event stream on the context it was
	// connected with: that one lives until the session is closed, and the
	// start timeout (or ctx) cancels it only while starting.
	life, endLife := context.WithCancelCause(context.WithoutCancel(ctx))
	timer := time.AfterFunc(s.m.opts.StartTimeout, func() { endLife(timeout) })
	stopParent := context.AfterFunc(ctx, func() { endLife(context.Cause(ctx)) })
	ctx, cancel := context.WithTimeoutCause(ctx, s.m.opts.StartTimeout, timeout)
	defer cancel()
	var t sdk.Transport
	var stderr *tail
	var stdio *exec.Cmd
	switch cfg.Kind() {
	case TypeStdio:
		// The command outlives ctx (the start timeout): the session ends
		// it in Close.
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Dir = s.m.opts.Dir
		cmd.Env = append(append([]string(nil), s.m.opts.Environ...), envList(cfg.Env)...)
		stderr = &tail{max: stderrTail}
		cmd.Stderr = stderr
		// In a group of its own, ended whole with it: a server started
		// through npx or a shell leaves children (node, a browser) that
		// would outlive it and hold its stderr, so Wait never returned.
		procgroup.Set(cmd)
		cmd.WaitDelay = max(s.m.opts.StopTimeout, time.Second)
		stdio = cmd
		s.mu.Lock()
		s.cmd = cmd
		s.mu.Unlock()
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: s.m.opts.StopTimeout}
	case TypeHTTP:
		// A call's event stream that the server closes before the answer
		// is resumed by GET with Last-Event-ID (as the spec asks), at most
		// httpResumes times; a stream without event ids cannot be resumed
		// and fails the call at once, so a dead server is still found fast.
		t = &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: s.httpClient(cfg.Headers), MaxRetries: httpResumes, DisableStandaloneSSE: true}
	case TypeSSE:
		t = &sdk.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: s.httpClient(cfg.Headers)}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "troupe", Version: "1"}, &sdk.ClientOptions{ResourceUpdatedHandler: s.resourceUpdated})
	fail := func(err error) (*sdk.ClientSession, *tail, []*sdk.Tool, *sdk.ServerCapabilities, error) {
		endLife(err)
		if stdio != nil {
			_ = procgroup.Kill(stdio) // what a server that failed to start left running
		}
		if c := context.Cause(life); c != nil && life.Err() != nil && c != err {
			err = c
		}
		return nil, stderr, nil, nil, s.startError(err, stderr)
	}
	sess, err := client.Connect(life, t, nil)
	if stdio != nil {
		procgroup.Started(stdio) // the process's ledger, until Kill: killed even if we die
	}
	if err != nil {
		timer.Stop()
		stopParent()
		return fail(err)
	}
	if !timer.Stop() || !stopParent() {
		sess.Close()
		return fail(context.Cause(life))
	}
	s.mu.Lock()
	s.endLife = endLife
	s.mu.Unlock()
	var caps *sdk.ServerCapabilities
	if ir := sess.InitializeResult(); ir != nil {
		caps = ir.Capabilities
	}
	var tools []*sdk.Tool
	if caps == nil || caps.Tools != nil {
		for tl, err := range sess.Tools(ctx, nil) {
			if err != nil {
				sess.Close()
				return fail(fmt.Errorf("list tools: %w", err))
			}
			if len(tools) == MaxListed {
				sess.Close()
				return fail(fmt.Errorf("list tools: more than %d (a server that pages without end?)", MaxListed))
			}
			tools = append(tools, tl)
		}
	}
	return sess, stderr, tools, caps, nil
}

// startError says which server failed, how it is started and the end of
// what it wrote on stderr.
func (s *server) startError(err error, stderr *tail) error {
	msg := fmt.Sprintf("MCP server %q (%s %s) failed to start: %v", s.cfg.Name, s.cfg.Kind(), s.target(), err)
	if stderr != nil {
		if t := strings.TrimSpace(stderr.String()); t != "" {
			msg += "\nstderr (last lines):\n" + t
		}
	}
	return errors.New(msg)
}

func (s *server) httpClient(headers map[string]string) *http.Client {
	base := s.m.opts.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	if len(headers) == 0 {
		return base
	}
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = headerTransport{base: rt, headers: headers}
	return &c
}

// headerTransport adds a server's configured headers to each request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// current returns the live session, or the error that the server is
// failed.
func (s *server) current() (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == nil {
		if s.err != nil {
			return nil, s.err
		}
		return nil, fmt.Errorf("MCP server %q is not connected", s.cfg.Name)
	}
	return s.session, nil
}

// broken handles a call on sess that failed because the connection
// broke: the first time, the server is restarted; after that, it is
// marked failed. It returns a message for the model.
func (s *server) broken(ctx context.Context, sess *sdk.ClientSession, cause error) string {
	s.mu.Lock()
	if s.session != sess { // another call saw it first
		wait := s.restarting
		s.mu.Unlock()
		if wait != nil {
			<-wait
		}
		return s.brokenMessage(cause)
	}
	s.session = nil
	endLife := s.endLife
	defer endLife(errors.New("connection broken"))
	if s.restarts >= 1 || s.m.isClosed() {
		failed := fmt.Errorf("MCP server %q (%s) stopped (%v) after its restart; it is marked failed", s.cfg.Name, s.target(), cause)
		s.err = failed
		stderr := s.stderr
		s.mu.Unlock()
		// What a dying process wrote last on stderr is all there only once
		// it has exited: os/exec copies the pipe until then, and Close
		// waits for it. Read before, the tail could miss its last words.
		sess.Close()
		if stderr != nil {
			if t := strings.TrimSpace(stderr.String()); t != "" {
				s.mu.Lock()
				if s.err == failed {
					s.err = fmt.Errorf("%w\nstderr (last lines):\n%s", failed, t)
				}
				s.mu.Unlock()
			}
		}
		return s.brokenMessage(cause)
	}
	s.restarts++
	done := make(chan struct{})
	s.restarting = done
	s.mu.Unlock()
	sess.Close()
	s.start(context.WithoutCancel(ctx))
	s.mu.Lock()
	s.restarting = nil
	s.mu.Unlock()
	close(done)
	return s.brokenMessage(cause)
}

func (s *server) brokenMessage(cause error) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil {
		return fmt.Sprintf("MCP server %q stopped during the call (%v); it was restarted, and the call was not retried: call the tool again if it is still needed", s.cfg.Name, cause)
	}
	return fmt.Sprintf("MCP server %q stopped during the call (%v) and is unavailable: %v", s.cfg.Name, cause, s.err)
}

func (s *server) close() error {
	s.mu.Lock()
	sess, endLife, cmd := s.session, s.endLife, s.cmd
	s.session = nil
	if s.err == nil {
		s.err = ErrClosed
	}
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	defer endLife(ErrClosed)
	err := sess.Close()
	if cmd != nil {
		_ = procgroup.Kill(cmd) // the server's children, which its end does not end
	}
	if err != nil && !isExitErr(err) {
		return fmt.Errorf("close MCP server %q: %w", s.cfg.Name, err)
	}
	return nil
}

// isExitErr reports whether err is only a stdio server's exit status
// after Close terminated it.
func isExitErr(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) || errors.Is(err, os.ErrProcessDone) || errors.Is(err, exec.ErrWaitDelay)
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int

	mu  sync.Mutex
	buf []byte // guarded by mu
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
