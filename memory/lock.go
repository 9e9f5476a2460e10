package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// LockName is the dream lock's file in the memory folder: its
// modification time records when the last dream started.
const LockName = ".dream-lock"

// DefaultStale is how old a held lock may get before another session
// takes it over (its holder died without releasing it).
const DefaultStale = time.Hour

// ErrBusy: another session is dreaming.
var ErrBusy = errors.New("another session is dreaming")

// Lock is the dream lock of a memory folder: a file whose modification
// time is the time of the last dream, and beside it a directory that
// exists while a dream runs (mkdir is atomic across processes), so that
// two sessions never dream at once.
type Lock struct {
	Dir   string           // the memory folder
	Now   func() time.Time // nil means time.Now
	Stale time.Duration    // 0 means DefaultStale
}

func (l Lock) path() string     { return l.Dir + string(os.PathSeparator) + LockName }
func (l Lock) heldPath() string { return l.path() + ".held" }

func (l Lock) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Last returns when the last dream started; zero when there was none.
func (l Lock) Last() (time.Time, error) {
	st, err := os.Stat(l.path())
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("dream lock: %w", err)
	}
	return st.ModTime(), nil
}

// Held is an acquired dream lock.
type Held struct {
	l     Lock
	Prior time.Time // the last dream before this one; zero if none
}

// Acquire takes the lock for a dream starting now: the lock file's time
// becomes now, and the previous one is kept in Held.Prior for Rollback.
// While another session holds it (and its hold is not stale) it fails
// with ErrBusy.
func (l Lock) Acquire() (*Held, error) {
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("dream lock: %w", err)
	}
	if err := os.Mkdir(l.heldPath(), 0o700); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("dream lock: %w", err)
		}
		stale := l.Stale
		if stale <= 0 {
			stale = DefaultStale
		}
		st, serr := os.Stat(l.heldPath())
		if serr != nil || l.now().Sub(st.ModTime()) < stale {
			return nil, ErrBusy
		}
		// Stale: take it over, refreshing its time; a concurrent taker
		// that also saw it stale may race here, which the rename settles:
		// only one rename of a fresh directory over it wins.
		tmp := l.heldPath() + "." + strconv.Itoa(os.Getpid())
		if err := os.Mkdir(tmp, 0o700); err != nil {
			return nil, ErrBusy
		}
		if err := os.Remove(l.heldPath()); err != nil {
			_ = os.Remove(tmp)
			return nil, ErrBusy
		}
		if err := os.Rename(tmp, l.heldPath()); err != nil {
			_ = os.Remove(tmp)
			return nil, ErrBusy
		}
	}
	prior, err := l.Last()
	if err != nil {
		_ = os.Remove(l.heldPath())
		return nil, err
	}
	now := l.now()
	err = os.WriteFile(l.path(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	if err == nil {
		err = os.Chtimes(l.path(), now, now)
	}
	if err != nil {
		_ = os.Remove(l.heldPath())
		return nil, fmt.Errorf("dream lock: %w", err)
	}
	return &Held{l: l, Prior: prior}, nil
}

// Release ends a dream that finished: the lock file keeps the time the
// dream started.
func (h *Held) Release() error {
	if err := os.Remove(h.l.heldPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("dream lock: %w", err)
	}
	return nil
}

// Rollback ends a dream that failed or was stopped: the lock file gets
// back the previous dream's time (or goes, when there was none), so that
// the dream is due again.
func (h *Held) Rollback() error {
	var err error
	if h.Prior.IsZero() {
		err = os.Remove(h.l.path())
	} else {
		err = os.Chtimes(h.l.path(), h.Prior, h.Prior)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("dream lock rollback: %w", err)
	}
	return h.Release()
}

// Due reports whether a dream should run: at least minHours since the
// last one (a zero last counts as long ago) and at least minSessions
// sessions since. It is pure.
func Due(now, last time.Time, sessionsSince int, minHours time.Duration, minSessions int) bool {
	return (last.IsZero() || now.Sub(last) >= minHours) && sessionsSince >= minSessions
}

// SessionsSince lists the sessions (folders of sessionsDir, one per
// session's transcripts) changed after since, except the one named
// current.
func SessionsSince(sessionsDir string, since time.Time, current string) ([]string, error) {
	ents, err := os.ReadDir(sessionsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() || e.Name() == current {
			continue
		}
		if latest(sessionsDir + string(os.PathSeparator) + e.Name()).After(since) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// latest returns the newest modification time of dir and the files in it
// (a transcript appended to changes its file, not its folder).
func latest(dir string) time.Time {
	var t time.Time
	if st, err := os.Stat(dir); err == nil {
		t = st.ModTime()
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.ModTime().After(t) {
			t = info.ModTime()
		}
	}
	return t
}
