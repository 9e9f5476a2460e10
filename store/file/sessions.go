package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/procgroup"
	"github.com/troupe-dev/troupe/peer"
)

// Sessions is the registry of the sessions running on this machine under
// one home: <home>/sessions/live/<id>.json, each written atomically, 0600
// in a 0700 folder, and the session's socket beside it (peer.SocketPath).
// List sweeps the entries (and sockets) of this host whose process is
// gone, a reused pid told apart by its start time. It is safe for
// concurrent use, also across processes.
type Sessions struct {
	dir  string
	host string
}

var _ peer.Registry = (*Sessions)(nil)

// NewSessions returns the session registry under home.
func NewSessions(home string) *Sessions {
	host, _ := os.Hostname()
	return &Sessions{dir: filepath.Join(home, "sessions", "live"), host: host}
}

// Dir is the registry's folder, where sessions' sockets go too.
func (s *Sessions) Dir() string { return s.dir }

// Host is the host name entries of this machine carry.
func (s *Sessions) Host() string { return s.host }

// validID refuses ids that are not one plain file name.
func validID(id string) error {
	if id == "" || strings.ContainsAny(id, `/\`+"\x00") || id == "." || id == ".." || strings.HasPrefix(id, ".") {
		return fmt.Errorf("session id %q is not a plain name", id)
	}
	return nil
}

func (s *Sessions) path(id string) string { return filepath.Join(s.dir, id+".json") }

// Publish writes e's entry, replacing the previous one.
func (s *Sessions) Publish(_ context.Context, e peer.Entry) error {
	if err := validID(e.ID); err != nil {
		return fmt.Errorf("publish session: %w", err)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("publish session %s: %w", e.ID, err)
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("publish session %s: %w", e.ID, err)
	}
	if err := atomicfile.WriteFile(s.path(e.ID), b, 0o600, atomicfile.Options{ExactMode: true}); err != nil && !errors.Is(err, atomicfile.ErrUnsynced) {
		return fmt.Errorf("publish session %s: %w", e.ID, err)
	}
	return nil
}

// Remove deletes id's entry; a missing one is not an error.
func (s *Sessions) Remove(_ context.Context, id string) error {
	if err := validID(id); err != nil {
		return fmt.Errorf("remove session: %w", err)
	}
	if err := os.Remove(s.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	return nil
}

// List returns the live entries, oldest first. An entry of this host
// whose process no longer runs is removed with its socket; an entry that
// cannot be read is skipped.
func (s *Sessions) List(ctx context.Context) ([]peer.Entry, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []peer.Entry
	for _, de := range ents {
		name := de.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil {
			continue
		}
		var e peer.Entry
		if json.Unmarshal(b, &e) != nil || e.ID+".json" != name {
			continue
		}
		if e.Host == s.host && !(procgroup.Owner{PID: e.PID, Start: e.Start}).Runs() {
			s.sweep(ctx, e)
			continue
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b peer.Entry) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// sweep removes a dead session's entry and its socket (only a socket
// file, and only inside the registry's or the fallback's folder).
func (s *Sessions) sweep(ctx context.Context, e peer.Entry) {
	_ = s.Remove(ctx, e.ID)
	if e.Socket == "" {
		return
	}
	if fi, err := os.Lstat(e.Socket); err == nil && fi.Mode()&fs.ModeSocket != 0 {
		os.Remove(e.Socket)
	}
}
