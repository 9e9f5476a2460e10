package peer_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/peer"
)

// shortDir is a folder whose socket paths fit sun_path (t.TempDir's may
// not).
func shortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "pr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type inbox struct {
	mu   sync.Mutex
	got  []peer.Message
	kick chan struct{}
}

func newInbox() *inbox { return &inbox{kick: make(chan struct{}, 1)} }

func (b *inbox) deliver(m peer.Message) error {
	b.mu.Lock()
	b.got = append(b.got, m)
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
	return nil
}

func (b *inbox) messages() []peer.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.got)
}

func listen(t testing.TB, cfg peer.ListenConfig) *peer.Server {
	t.Helper()
	p, err := peer.SocketPath(shortDir(t), "session-under-test")
	if err != nil {
		t.Fatal(err)
	}
	s, err := peer.Listen(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSocketDelivers(t *testing.T) {
	in := newInbox()
	s := listen(t, peer.ListenConfig{Deliver: in.deliver})
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v; want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(s.Path())); di.Mode().Perm() != 0o700 {
		t.Errorf("socket folder mode = %v; want 0700", di.Mode().Perm())
	}
	m := validMessage()
	if err := peer.Send(t.Context(), s.Path(), m); err != nil {
		t.Fatalf("Send = %v", err)
	}
	if got := in.messages(); len(got) != 1 || got[0] != m {
		t.Fatalf("delivered %+v; want [%+v]", got, m)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file after Close: %v; want it removed", err)
	}
	if err := peer.Send(t.Context(), s.Path(), m); !errors.Is(err, peer.ErrNotFound) {
		t.Errorf("Send after Close = %v; want ErrNotFound", err)
	}
}

func TestSocketRefusals(t *testing.T) {
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil))
	in := newInbox()
	s := listen(t, peer.ListenConfig{Deliver: in.deliver, Log: log})
	big := make([]byte, 4)
	binary.BigEndian.PutUint32(big, peer.MaxFrame+1)
	tests := []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"forged", raw([]byte(`{"type":"message","message":{"from":"x","session":"s","text":"hi","admin":true}}`)), "unknown field"},
		{"garbage", raw([]byte("\x00\x01rm -rf /")), "invalid JSON"},
		{"oversized", big, "more than"},
		{"reply", raw([]byte(`{"type":"reply","ok":true}`)), "expected a message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("unix", s.Path())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Write(tt.bytes); err != nil {
				t.Fatal(err)
			}
			f, err := peer.ReadFrame(c)
			if err != nil {
				t.Fatalf("no reply to a bad frame: %v", err)
			}
			if f.OK || !strings.Contains(f.Error, tt.want) {
				t.Fatalf("reply = %+v; want a refusal containing %q", f, tt.want)
			}
		})
	}
	if got := in.messages(); len(got) != 0 {
		t.Errorf("bad frames delivered %+v", got)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if n := strings.Count(logs.String(), "frame refused"); n != len(tests) {
		t.Errorf("logged %d refusals; want %d:\n%s", n, len(tests), logs.String())
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func TestSocketForeignUID(t *testing.T) {
	in := newInbox()
	var seen []int
	var mu sync.Mutex
	s := listen(t, peer.ListenConfig{Deliver: in.deliver, CheckPeer: func(uid int) error {
		mu.Lock()
		seen = append(seen, uid)
		mu.Unlock()
		return fmt.Errorf("uid %d is not this session's user", uid+1) // as if we were another user
	}})
	err := peer.Send(t.Context(), s.Path(), validMessage())
	if !errors.Is(err, peer.ErrRefused) || !strings.Contains(err.Error(), "not this session's user") {
		t.Fatalf("Send from a foreign uid = %v; want ErrRefused", err)
	}
	if got := in.messages(); len(got) != 0 {
		t.Errorf("delivered %+v from a foreign uid", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != os.Getuid() {
		t.Errorf("CheckPeer saw uids %v; want [%d] (SO_PEERCRED)", seen, os.Getuid())
	}
}

func TestSocketDeliverRefuses(t *testing.T) {
	s := listen(t, peer.ListenConfig{Deliver: func(peer.Message) error { return errors.New("this session takes no peer messages") }})
	err := peer.Send(t.Context(), s.Path(), validMessage())
	if !errors.Is(err, peer.ErrRefused) || !strings.Contains(err.Error(), "no peer messages") {
		t.Fatalf("Send = %v; want the refusal", err)
	}
}

func TestListenReplacesStaleSocket(t *testing.T) {
	p, err := peer.SocketPath(shortDir(t), "stale")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the file stays, nobody listens: a dead session's
	if _, err := peer.Listen(p, peer.ListenConfig{Deliver: newInbox().deliver}); err != nil {
		t.Fatalf("Listen over a stale socket = %v", err)
	}
	// A live one is not taken over.
	if _, err := peer.Listen(p, peer.ListenConfig{Deliver: newInbox().deliver}); err == nil || !strings.Contains(err.Error(), "another session") {
		t.Fatalf("Listen over a live socket = %v; want refused", err)
	}
}

func TestSocketPathFallsBack(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	p, err := peer.SocketPath(long, "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if len(p) > 103 || strings.HasPrefix(p, long) || filepath.Base(p) != "0123456789ab.sock" {
		t.Fatalf("SocketPath = %q; want a short path outside %s", p, long)
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("fallback folder: %v %v; want 0700", fi, err)
	}
}

// BenchmarkSocketSend measures one message from Send to Deliver and the
// reply back, on one machine; it reports p50 and p99.
func BenchmarkSocketSend(b *testing.B) {
	s := listen(b, peer.ListenConfig{Deliver: func(peer.Message) error { return nil }})
	m := validMessage()
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if err := peer.Send(ctx, s.Path(), m); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}
