package nats

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/internal/editbatch"
	"github.com/troupe-dev/troupe/internal/flight"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// Defaults for Options.
const (
	DefaultNamespace      = "troupe"
	DefaultKeepRead       = 100
	DefaultLockStale      = 10 * time.Second
	DefaultConnectTimeout = 5 * time.Second
	DefaultRequestTimeout = 10 * time.Second
	DefaultSendTimeout    = 30 * time.Second
	DefaultMaxReconnect   = 5 * time.Second
)

// schemaVersion is the layout version, part of every stream and bucket
// name and recorded in their metadata under schemaKey.
const (
	schemaVersion = "1"
	schemaKey     = "troupe_schema"
)

// Options tune a Store. The zero value connects without credentials.
type Options struct {
	// Token, User/Password, CredsFile (a .creds file with a JWT and an
	// nkey seed) authenticate to the server.
	Token     string
	User      string
	Password  string
	CredsFile string
	// TLSCAFile is a PEM file of roots to verify the server with;
	// TLSCertFile and TLSKeyFile are a client certificate for mutual TLS.
	// Setting any of them requires TLS.
	TLSCAFile   string
	TLSCertFile string
	TLSKeyFile  string
	// Name is the client name the server shows. Default "troupe".
	Name string
	// Namespace prefixes every stream, bucket and subject, so that
	// independent installations can share a server: [a-z0-9_-], at most 32
	// characters. Default "troupe".
	Namespace string
	// Replicas is how many servers of a JetStream cluster keep a copy of
	// each stream and bucket: 1-5. A positive count is given to new
	// streams and set on existing ones. 0 (auto) gives new streams 3 when
	// the server is part of a cluster of 3 or more, else 1, and keeps the
	// count of existing ones (see replicas.go).
	Replicas int
	// KeepRead is how many read messages an inbox keeps. Default 100;
	// negative keeps none.
	KeepRead int
	// LockStale is how long a task-list lock whose holder stopped
	// refreshing it stays held. Default 10 s.
	LockStale time.Duration
	// ConnectTimeout bounds the first connection. Default 5 s.
	ConnectTimeout time.Duration
	// RequestTimeout bounds one command (a read, a compare-and-swap
	// write, a scan) when ctx has no earlier deadline, counting only the
	// time the store is connected: a command waits out an outage of any
	// length, until its ctx ends (outage.go). Within it, a request cut off
	// by a lost connection or left unanswered is retried. Default 10 s.
	RequestTimeout time.Duration
	// SendTimeout bounds how long Send retries a publish whose
	// acknowledgement did not come, on top of its ctx, counting like
	// RequestTimeout only connected time. Default 30 s.
	SendTimeout time.Duration
	// MaxReconnectWait caps the backoff between reconnect attempts.
	// Default 5 s.
	MaxReconnectWait time.Duration
	// Now stamps messages sent without a timestamp. Default time.Now.
	Now func() time.Time
	// Logger receives connection events and recoveries. Default: discard.
	Logger *slog.Logger
}

var namespacePattern = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// Store is a connection to a NATS server with the streams and buckets of
// one namespace.
type Store struct {
	url      string // as given, credentials removed
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	keepRead int

	replicas int  // of new streams (see replicas.go)
	resize   bool // set replicas on existing streams too

	nc *natsgo.Conn
	js jetstream.JetStream

	teams    jetstream.KeyValue
	tasks    jetstream.KeyValue
	mailRead jetstream.KeyValue
	mail     jetstream.Stream

	tasksStream    jetstream.Stream // the streams under tasks and mailRead,
	mailReadStream jetstream.Stream // for purging many keys at once

	// readHook, when set (tests), runs in a read at each stage: "floor"
	// once it took its inbox's read floor, "scanned" once the scan
	// answered (the marks may not have).
	readHook func(stage string)

	mailStream  string // stream name
	mailSubject string // subject prefix of inboxes, without a trailing dot
	owner       string // names this Store in lock entries

	ctx    context.Context // lifecycle: canceled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	connMu sync.Mutex
	lost   chan struct{} // guarded by connMu; closed when the current connection drops
	back   chan struct{} // guarded by connMu; while disconnected, closed when the connection is back (outage.go)
	downAt time.Time     // guarded by connMu; when the outage began, zero while connected

	mu       sync.Mutex
	closed   bool                  // guarded by mu
	watchers map[*watcher]struct{} // guarded by mu; kicked after a reconnect
	fans     map[string]*fan       // guarded by mu; shared server-side watches by key (fan.go)

	// lists coalesces concurrent task-list reads (Tasks.List).
	lists flight.Group[[]tasklist.Entry]
	// decoded keeps the last decoding of each team entry (team.go).
	decoded teamDecodes
	// edits writes roster edits together (Teams.Edit).
	edits editbatch.Batches
	// seen is the newest message of each inbox that this store's inbox
	// watches delivered (delivered.go).
	seen deliveredSeqs
	// floors is the read floor of each inbox this store read (readfloor.go).
	floors readFloors
}

// Open connects to the NATS server (or servers: a comma-separated list) at
// serverURL and makes sure the namespace's streams and buckets exist with a
// compatible configuration. It fails with an error naming the URL when the
// server is unreachable or refuses the credentials, and naming the stream
// or bucket when one is incompatible.
func Open(ctx context.Context, serverURL string, opts Options) (*Store, error) {
	shown := redactURL(serverURL)
	if strings.TrimSpace(serverURL) == "" {
		return nil, errors.New("open nats store: empty server URL")
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if !namespacePattern.MatchString(opts.Namespace) {
		return nil, fmt.Errorf("open nats store: namespace %q: want 1-32 characters from [a-z0-9_-]", opts.Namespace)
	}
	if opts.Name == "" {
		opts.Name = "troupe"
	}
	if opts.Replicas < 0 || opts.Replicas > 5 {
		return nil, fmt.Errorf("open nats store: replicas %d: want 1-5, or 0 to choose from the cluster's size", opts.Replicas)
	}
	if opts.KeepRead == 0 {
		opts.KeepRead = DefaultKeepRead
	}
	if opts.LockStale <= 0 {
		opts.LockStale = DefaultLockStale
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = DefaultSendTimeout
	}
	if opts.MaxReconnectWait <= 0 {
		opts.MaxReconnectWait = DefaultMaxReconnect
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if (opts.TLSCertFile == "") != (opts.TLSKeyFile == "") {
		return nil, errors.New("open nats store: a TLS client certificate needs both its certificate and its key file")
	}
	for _, f := range []string{opts.CredsFile, opts.TLSCAFile, opts.TLSCertFile, opts.TLSKeyFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("open nats store %s: %w", shown, err)
		}
	}
	s := &Store{
		url:      shown,
		opts:     opts,
		log:      opts.Logger.With("nats", shown),
		now:      opts.Now,
		keepRead: max(opts.KeepRead, 0),
		watchers: map[*watcher]struct{}{},
		fans:     map[string]*fan{},
		owner:    ownerName(),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	nc, err := natsgo.Connect(serverURL, s.natsOptions()...)
	if err != nil {
		s.cancel()
		return nil, fmt.Errorf("connect to NATS at %s: %w", shown, err)
	}
	s.nc = nc
	s.chooseReplicas()
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(opts.RequestTimeout))
	if err != nil {
		s.cancel()
		nc.Close()
		return nil, fmt.Errorf("open nats store %s: %w", shown, err)
	}
	s.js = js
	if err := s.setup(ctx); err != nil {
		s.cancel()
		nc.Close()
		return nil, fmt.Errorf("open nats store %s: %w", shown, err)
	}
	return s, nil
}

// natsOptions returns the connection options: credentials, TLS, and
// reconnects with capped exponential backoff, reported through the logger.
func (s *Store) natsOptions() []natsgo.Option {
	o := s.opts
	out := []natsgo.Option{
		natsgo.Name(o.Name),
		natsgo.Timeout(o.ConnectTimeout),
		natsgo.MaxReconnects(-1),
		natsgo.CustomReconnectDelay(func(attempts int) time.Duration {
			return backoff(attempts, o.MaxReconnectWait)
		}),
		natsgo.DisconnectErrHandler(func(_ *natsgo.Conn, err error) {
			s.floors.reset()
			s.disconnected()
			if err != nil {
				s.log.Warn("nats store: disconnected; reconnecting (waiting for the store: commands wait for it, however long)", "err", err)
			}
		}),
		natsgo.ReconnectHandler(func(nc *natsgo.Conn) {
			s.floors.reset()
			down := s.reconnected()
			s.log.Warn("nats store: reconnected; the store is back", "server", nc.ConnectedUrlRedacted(), "outage", down.Round(time.Millisecond))
			s.kickAll()
		}),
		natsgo.ErrorHandler(func(_ *natsgo.Conn, sub *natsgo.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			s.log.Error("nats store: asynchronous error", "subject", subject, "err", err)
		}),
		natsgo.ClosedHandler(func(*natsgo.Conn) {
			s.log.Debug("nats store: connection closed")
		}),
	}
	if o.Token != "" {
		out = append(out, natsgo.Token(o.Token))
	}
	if o.User != "" || o.Password != "" {
		out = append(out, natsgo.UserInfo(o.User, o.Password))
	}
	if o.CredsFile != "" {
		out = append(out, natsgo.UserCredentials(o.CredsFile))
	}
	if o.TLSCAFile != "" {
		out = append(out, natsgo.RootCAs(o.TLSCAFile))
	}
	if o.TLSCertFile != "" {
		out = append(out, natsgo.ClientCert(o.TLSCertFile, o.TLSKeyFile))
	}
	return out
}

// backoff returns the wait before reconnect attempt n: 100 ms doubling up
// to limit, with up to 20 % jitter so that many clients spread out.
func backoff(n int, limit time.Duration) time.Duration {
	d := 100 * time.Millisecond
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// redactURL removes passwords and tokens from a server URL (or list).
func redactURL(raw string) string {
	parts := strings.Split(raw, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil || u.User == nil {
			continue
		}
		u.User = url.User("REDACTED")
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}

// ownerName returns a name unique to this Store among all processes.
func ownerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), crand.Text()[:8])
}

// URL returns the server URL the store connected to, without credentials.
func (s *Store) URL() string { return s.url }

// Close stops every watch (closing their channels), waits for the store's
// goroutines and closes the connection. Operations after Close fail with
// the package's ErrClosed. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.closeFans()
	s.wg.Wait()
	s.nc.Close()
	return nil
}

// goFunc runs f in a goroutine owned by the store; f must return soon
// after s.ctx is done. It reports false, without running f, once Close
// began.
func (s *Store) goFunc(f func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Go(func() { f(s.ctx) })
	return true
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// errStoreClosed is translated into the calling view's ErrClosed.
var errStoreClosed = errors.New("nats store closed")

// begin checks that the store is open and ctx alive, and returns ctx
// bounded by the request timeout and by Close.
func (s *Store) begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if s.isClosed() {
		return nil, nil, errStoreClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, context.Cause(ctx)
	}
	ctx, cancel := s.budget(ctx, s.opts.RequestTimeout) // outage.go: an outage does not count
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { stop(); cancel() }, nil
}

// closedAs maps errStoreClosed (or a request cut by Close) to sentinel.
func (s *Store) closedAs(err, sentinel error) error {
	if errors.Is(err, errStoreClosed) || s.isClosed() || errors.Is(err, natsgo.ErrConnectionClosed) {
		return sentinel
	}
	return err
}

// Teams is the team.Store view of a Store.
type Teams struct{ s *Store }

// Mail is the mailbox.Store view of a Store.
type Mail struct{ s *Store }

// Tasks is the tasklist.Store view of a Store.
type Tasks struct{ s *Store }

// Teams returns the store's teams.
func (s *Store) Teams() *Teams { return &Teams{s} }

// Mail returns the store's mailboxes.
func (s *Store) Mail() *Mail { return &Mail{s} }

// Tasks returns the store's task lists.
func (s *Store) Tasks() *Tasks { return &Tasks{s} }

var (
	_ team.Store     = (*Teams)(nil)
	_ mailbox.Store  = (*Mail)(nil)
	_ tasklist.Store = (*Tasks)(nil)
)
