package peer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// maxSunPath is the longest socket path every Unix takes (sun_path is 104
// bytes on the BSDs and macOS, 108 on Linux, with its terminating NUL).
const maxSunPath = 103

// DefaultIOTimeout bounds one exchange on a socket: the frame in, the
// reply out.
const DefaultIOTimeout = 5 * time.Second

// SocketPath returns where session id's socket goes: in dir (made 0700)
// when the path fits sun_path, else in a per-user 0700 folder under the
// system's temporary folder. The file name is the id's first 12
// characters.
func SocketPath(dir, id string) (string, error) {
	name := id
	if len(name) > 12 {
		name = name[:12]
	}
	name += ".sock"
	p := filepath.Join(dir, name)
	if len(p) > maxSunPath {
		dir = filepath.Join(os.TempDir(), "troupe-"+strconv.Itoa(os.Getuid()), "s")
		p = filepath.Join(dir, name)
		if len(p) > maxSunPath {
			return "", fmt.Errorf("peer: socket path %s is longer than %d bytes", p, maxSunPath)
		}
	}
	if err := privateDir(dir); err != nil {
		return "", err
	}
	return p, nil
}

// privateDir makes dir (and its parents) and makes sure dir itself is
// 0700 and ours.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("peer: socket folder: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("peer: socket folder: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("peer: socket folder %s is not a folder", dir)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("peer: socket folder %s belongs to uid %d, not to us", dir, uid)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("peer: socket folder: %w", err)
		}
	}
	return nil
}

// ListenConfig configures Listen.
type ListenConfig struct {
	// Deliver takes a valid message; its error is sent back as the
	// refusal (wrapping ErrRefused on the sender's side).
	Deliver func(Message) error
	// CheckPeer, when set, replaces the default uid check: it is given
	// the connecting process's uid (-1 when it cannot be known) and
	// refuses with an error. The default refuses any uid but ours.
	CheckPeer func(uid int) error
	Log       *slog.Logger
	IOTimeout time.Duration // DefaultIOTimeout when 0
}

// Server is a session's listening socket.
type Server struct {
	path string
	ln   *net.UnixListener
	cfg  ListenConfig
	wg   sync.WaitGroup

	mu     sync.Mutex
	closed bool                  // guarded by mu
	conns  map[net.Conn]struct{} // guarded by mu
}

// Listen creates the socket at path (0600; a stale socket file there is
// replaced) and serves it until Close.
func Listen(path string, cfg ListenConfig) (*Server, error) {
	if cfg.Deliver == nil {
		return nil, errors.New("peer: listen: no Deliver")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.IOTimeout <= 0 {
		cfg.IOTimeout = DefaultIOTimeout
	}
	if cfg.CheckPeer == nil {
		me := os.Getuid()
		cfg.CheckPeer = func(uid int) error {
			if uid != me {
				return fmt.Errorf("uid %d is not this session's user", uid)
			}
			return nil
		}
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("peer: listen %s: another session listens there", path)
		}
		os.Remove(path) // a dead session's
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("peer: listen: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("peer: listen: %w", err)
	}
	s := &Server{path: path, ln: ln, cfg: cfg, conns: map[net.Conn]struct{}{}}
	s.wg.Go(s.accept)
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

func (s *Server) accept() {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.serve(c)
		})
		s.mu.Unlock()
	}
}

// serve answers the frames of one connection, each with a reply.
func (s *Server) serve(c *net.UnixConn) {
	uid, err := peerUID(c)
	if err != nil {
		uid = -1
	}
	if err := s.cfg.CheckPeer(uid); err != nil {
		s.cfg.Log.Warn("peer: connection refused", "socket", s.path, "uid", uid, "reason", err)
		s.reply(c, fmt.Errorf("refused: %v", err))
		return
	}
	for {
		c.SetDeadline(time.Now().Add(s.cfg.IOTimeout))
		f, err := ReadFrame(c)
		if err != nil {
			var fe *FrameError
			if errors.As(err, &fe) {
				s.cfg.Log.Warn("peer: frame refused", "socket", s.path, "uid", uid, "reason", fe.Reason)
				s.reply(c, err)
			}
			return // EOF, a timeout or a bad frame: the connection ends
		}
		if f.Type != FrameMessage {
			s.cfg.Log.Warn("peer: frame refused", "socket", s.path, "uid", uid, "reason", "not a message")
			s.reply(c, &FrameError{"expected a message frame, got " + f.Type})
			return
		}
		if err := s.cfg.Deliver(*f.Message); err != nil {
			s.cfg.Log.Info("peer: message refused", "socket", s.path, "from", f.Message.Sender(), "reason", err)
			s.reply(c, err)
			continue
		}
		s.reply(c, nil)
	}
}

func (s *Server) reply(c net.Conn, err error) {
	f := Frame{Type: FrameReply, OK: err == nil}
	if err != nil {
		f.Error = err.Error()
	}
	c.SetWriteDeadline(time.Now().Add(s.cfg.IOTimeout))
	_ = WriteFrame(c, f)
}

// Close stops listening, removes the socket file, ends open connections
// and waits for their goroutines. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

// Send delivers m to the session listening at path and waits for its
// reply: nil once it took the message, an error wrapping ErrRefused when
// it refused it, ErrNotFound when nothing listens there.
func Send(ctx context.Context, path string, m Message) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return fmt.Errorf("send to %s: %w (%v)", path, ErrNotFound, err)
	}
	defer c.Close()
	return Exchange(ctx, c, Frame{Type: FrameMessage, Message: &m})
}

// Exchange writes f on c and reads the reply; its error wraps ErrRefused
// for a refusal. Tests use it to send frames Send would not.
func Exchange(ctx context.Context, c net.Conn, f Frame) error {
	dl := time.Now().Add(DefaultIOTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	werr := WriteFrame(c, f)
	r, err := ReadFrame(c) // also after a failed write: a refusal may be waiting
	if err != nil && werr != nil {
		return fmt.Errorf("send: %w", werr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("send: read reply: %w", err)
	}
	if r.Type != FrameReply {
		return fmt.Errorf("send: reply of type %q", r.Type)
	}
	if !r.OK {
		return fmt.Errorf("%w: %s", ErrRefused, r.Error)
	}
	return nil
}
