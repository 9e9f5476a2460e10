package lockfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/troupe-dev/troupe/internal/dirwatch"
)

func TestOptionsNormalized(t *testing.T) {
	type durations struct{ Stale, Update, MinBackoff, MaxBackoff time.Duration }
	tests := []struct {
		name string
		in   Options
		want durations
	}{
		{"zero is Claude Code's", Options{}, durations{10 * time.Second, 5 * time.Second, 5 * time.Millisecond, 100 * time.Millisecond}},
		{"stale raised to minimum", Options{Stale: time.Second}, durations{2 * time.Second, time.Second, 5 * time.Millisecond, 100 * time.Millisecond}},
		{"update clamped to stale/2", Options{Stale: 4 * time.Second, Update: 3 * time.Second}, durations{4 * time.Second, 2 * time.Second, 5 * time.Millisecond, 100 * time.Millisecond}},
		{"update raised to 1s", Options{Stale: 30 * time.Second, Update: 10 * time.Millisecond}, durations{30 * time.Second, time.Second, 5 * time.Millisecond, 100 * time.Millisecond}},
		{"max backoff at least min", Options{MinBackoff: time.Second, MaxBackoff: time.Millisecond}, durations{10 * time.Second, 5 * time.Second, time.Second, time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.in.normalized()
			got := durations{o.Stale, o.Update, o.MinBackoff, o.MaxBackoff}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("normalized(%+v) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if o.Now == nil || o.Logger == nil {
				t.Errorf("normalized(%+v) left Now or Logger nil", tt.in)
			}
		})
	}
}

func lockPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "inbox.json.lock")
}

func mustTryAcquire(t *testing.T, dir string, o Options) *Lock {
	t.Helper()
	l, err := TryAcquire(dir, o)
	if err != nil {
		t.Fatalf("TryAcquire(%q) error: %v", dir, err)
	}
	t.Cleanup(func() { l.Release() })
	return l
}

// makeStale creates a lock directory as a dead holder would leave it.
func makeStale(t *testing.T, dir string, age time.Duration) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-age)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
}

func TestTryAcquire(t *testing.T) {
	dir := lockPath(t)
	l := mustTryAcquire(t, dir, Options{})
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("after TryAcquire, Stat(%q) = %v, %v; want a directory", dir, fi, err)
	}
	if _, err := TryAcquire(dir, Options{}); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Errorf("second TryAcquire error = %v; want ErrLocked naming %q", err, dir)
	}
	if err := l.Verify(); err != nil {
		t.Errorf("Verify() = %v; want nil", err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("Release() = %v; want nil", err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release() = %v; want nil (idempotent)", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Release, Stat(%q) error = %v; want not exist", dir, err)
	}
	if err := l.Verify(); !errors.Is(err, ErrCompromised) {
		t.Errorf("Verify after Release = %v; want ErrCompromised", err)
	}
	mustTryAcquire(t, dir, Options{})
}

func TestTryAcquireStale(t *testing.T) {
	tests := []struct {
		name    string
		age     time.Duration
		wantErr error
	}{
		{"fresh lock is held", 0, ErrLocked},
		{"lock just under stale is held", DefaultStale - time.Second, ErrLocked},
		{"stale lock is reclaimed", DefaultStale + time.Second, nil},
		{"ancient lock is reclaimed", 24 * time.Hour, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := lockPath(t)
			makeStale(t, dir, tt.age)
			l, err := TryAcquire(dir, Options{})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("TryAcquire over a lock aged %v error = %v; want %v", tt.age, err, tt.wantErr)
			}
			if l != nil {
				if err := l.Release(); err != nil {
					t.Errorf("Release() = %v; want nil", err)
				}
			}
			assertNoStaleLeftovers(t, filepath.Dir(dir))
		})
	}
}

func TestTryAcquireErrors(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "inbox.json")
	if err := os.WriteFile(file, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
	}{
		{"missing parent", filepath.Join(base, "nope", "x.lock")},
		{"a stale-looking regular file is never reclaimed", file},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := TryAcquire(tt.dir, Options{})
			if err == nil || errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), tt.dir) {
				t.Errorf("TryAcquire(%q) = %v, %v; want an error naming it, not ErrLocked", tt.dir, l, err)
			}
		})
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "[]" {
		t.Errorf("file after TryAcquire on it = %q, %v; want it untouched", b, err)
	}
}

func TestVerifyAndReleaseDetectLoss(t *testing.T) {
	tests := []struct {
		name      string
		tamper    func(t *testing.T, dir string)
		wantExist bool // the other holder's directory must survive Release
	}{
		{"removed", func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"replaced", func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"touched by someone else", func(t *testing.T, dir string) {
			future := time.Now().Add(time.Second)
			if err := os.Chtimes(dir, future, future); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := lockPath(t)
			l, err := TryAcquire(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tt.tamper(t, dir)
			if err := l.Verify(); !errors.Is(err, ErrCompromised) {
				t.Errorf("Verify() = %v; want ErrCompromised", err)
			}
			select {
			case <-l.Lost():
			default:
				t.Errorf("Lost() not closed after a failed Verify")
			}
			if err := l.Release(); !errors.Is(err, ErrCompromised) {
				t.Errorf("Release() = %v; want ErrCompromised", err)
			}
			if _, err := os.Stat(dir); (err == nil) != tt.wantExist {
				t.Errorf("after Release, Stat(%q) error = %v; want exists = %v", dir, err, tt.wantExist)
			}
		})
	}
}

// TestVerifyAfterPause fakes a pause with a clock that jumps: a holder that
// missed its refreshes but whose lock nobody took refreshes it and keeps it
// (as proper-lockfile 4 does). TestPausedHolder covers the lock taken.
func TestVerifyAfterPause(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	dir := lockPath(t)
	l := mustTryAcquire(t, dir, Options{Now: now, Stale: time.Hour})
	offset.Store(int64(50 * time.Minute)) // refresh long overdue, but nobody took the lock
	if err := l.Verify(); err != nil {
		t.Fatalf("Verify() after a pause, lock untouched = %v; want nil", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if age := now().Sub(fi.ModTime()); age > time.Minute {
		t.Errorf("lock age after Verify = %v; want a fresh refresh", age)
	}
}

func TestAcquireContext(t *testing.T) {
	errShutdown := errors.New("shutdown")
	tests := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		wantIs  []error
		wantNot []error
	}{
		{
			name: "canceled before",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			wantIs:  []error{context.Canceled},
			wantNot: []error{ErrTimeout},
		},
		{
			name: "canceled while waiting",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(20*time.Millisecond, cancel)
				return ctx, cancel
			},
			wantIs:  []error{context.Canceled},
			wantNot: []error{ErrTimeout},
		},
		{
			name: "canceled with cause",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(context.Background())
				time.AfterFunc(20*time.Millisecond, func() { cancel(errShutdown) })
				return ctx, func() { cancel(nil) }
			},
			wantIs:  []error{errShutdown, context.Canceled},
			wantNot: []error{ErrTimeout},
		},
		{
			name: "deadline",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 30*time.Millisecond)
			},
			wantIs: []error{ErrTimeout, context.DeadlineExceeded},
		},
		{
			name: "deadline with cause",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeoutCause(context.Background(), 30*time.Millisecond, errShutdown)
			},
			wantIs: []error{ErrTimeout, errShutdown, context.DeadlineExceeded},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := lockPath(t)
			mustTryAcquire(t, dir, Options{})
			ctx, cancel := tt.ctx()
			defer cancel()
			l, err := Acquire(ctx, dir, Options{})
			if l != nil {
				t.Fatalf("Acquire of a held lock returned a Lock")
			}
			for _, want := range tt.wantIs {
				if !errors.Is(err, want) {
					t.Errorf("Acquire error = %v; want it to wrap %v", err, want)
				}
			}
			for _, not := range tt.wantNot {
				if errors.Is(err, not) {
					t.Errorf("Acquire error = %v; want it not to wrap %v", err, not)
				}
			}
			if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "after waiting") {
				t.Errorf("Acquire error = %q; want it to name %q and the wait", msg, dir)
			}
		})
	}
}

// TestReleaseWakesWaiter proves the watch path: with a backoff of a
// minute, only the Watcher's kick can wake the waiter within the deadline.
func TestReleaseWakesWaiter(t *testing.T) {
	watchers := []struct {
		name string
		opts dirwatch.Options
	}{
		{"fsnotify", dirwatch.Options{}},
		{"forcepoll", dirwatch.Options{ForcePoll: true, PollInterval: 20 * time.Millisecond}},
	}
	for _, wt := range watchers {
		t.Run(wt.name, func(t *testing.T) {
			w, err := dirwatch.New(wt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			dir := lockPath(t)
			holder, err := TryAcquire(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Acquire reads the clock once per attempt to judge the holder's
			// age. Its second attempt follows its Subscribe, so after two
			// reads the waiter is waiting on the watch.
			clockReads := make(chan struct{}, 100)
			o := Options{
				MinBackoff: time.Minute,
				MaxBackoff: time.Minute,
				Watcher:    w,
				Now: func() time.Time {
					select {
					case clockReads <- struct{}{}:
					default:
					}
					return time.Now()
				},
			}
			got := make(chan error, 1)
			go func() {
				l, err := Acquire(t.Context(), dir, o)
				if err == nil {
					err = l.Release()
				}
				got <- err
			}()
			<-clockReads
			<-clockReads
			if err := holder.Release(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-got:
				if err != nil {
					t.Errorf("waiter Acquire after release = %v; want nil", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("waiter not woken within 5s of the release (backoff is 1 minute)")
			}
		})
	}
}

// TestWaiterWakesAtStaleTime shows that without any event the waiter
// wakes when the dead holder's lock turns stale, not a backoff later.
func TestWaiterWakesAtStaleTime(t *testing.T) {
	dir := lockPath(t)
	makeStale(t, dir, DefaultStale-300*time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	l, err := Acquire(ctx, dir, Options{MinBackoff: time.Minute, MaxBackoff: time.Minute})
	if err != nil {
		t.Fatalf("Acquire over a lock turning stale in 300ms = %v; want nil", err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("Release() = %v; want nil", err)
	}
}

// assertNoStaleLeftovers fails if dir holds moved-away lock directories.
func assertNoStaleLeftovers(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".stale-") {
			t.Errorf("leftover %s in %s", e.Name(), dir)
		}
	}
}

// TestReleaseStopsRefresh checks that held locks cost no goroutine between
// refreshes, and that a released lock, healthy or lost, is never refreshed
// again: nothing touches its path once another holder has taken it, past
// the refresh period. (Parallel tests have not started yet while this one
// runs, so no other Lock exists.)
func TestReleaseStopsRefresh(t *testing.T) {
	const stale = MinStale // refreshes every MinUpdate
	var locks []*Lock
	var dirs []string
	for i := range 10 {
		dir := filepath.Join(t.TempDir(), "x.lock")
		l, err := TryAcquire(dir, Options{Stale: stale})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			os.Remove(dir) // lost
		}
		locks = append(locks, l)
		dirs = append(dirs, dir)
	}
	if got := lockGoroutines(); got != 0 {
		t.Errorf("goroutines of Locks while holding 10 = %d; want 0", got)
	}
	for _, l := range locks {
		l.Release()
	}
	// Others take the paths; a refresh of a released Lock would touch
	// (or give up) theirs.
	var next []*Lock
	for _, dir := range dirs {
		next = append(next, mustTryAcquire(t, dir, Options{Stale: time.Hour}))
	}
	before := make([]ident, len(dirs))
	for i, dir := range dirs {
		id, err := statIdent(dir)
		if err != nil {
			t.Fatal(err)
		}
		before[i] = id
	}
	time.Sleep(MinUpdate + MinUpdate/2)
	for i, dir := range dirs {
		if id, err := statIdent(dir); err != nil || id != before[i] {
			t.Errorf("lock %d after its release and another's acquire: %v, %v; want untouched %v", i, id, err, before[i])
		}
		select {
		case <-next[i].Lost():
			t.Errorf("lock %d: the new holder lost it", i)
		default:
		}
	}
}

// lockGoroutines counts goroutines running a Lock's code.
func lockGoroutines() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "lockfile.(*Lock)")
}

// Abandon ends a wait for a held lock as soon as it reports the reason
// to wait gone, without waiting for the release; while it reports nil
// the waiter keeps waiting and then takes the lock.
func TestAcquireAbandon(t *testing.T) {
	dir := lockPath(t)
	held := mustTryAcquire(t, dir, Options{})
	gone := errors.New("the compare-and-swap can no longer succeed")
	var asked atomic.Int32
	var changed atomic.Bool
	done := make(chan error, 1)
	go func() {
		_, err := Acquire(t.Context(), dir, Options{MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Abandon: func() error {
			asked.Add(1)
			if changed.Load() {
				return gone
			}
			return nil
		}})
		done <- err
	}()
	for asked.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("Acquire returned %v while the lock was held and Abandon said wait", err)
	default:
	}
	changed.Store(true)
	select {
	case err := <-done:
		if !errors.Is(err, gone) {
			t.Errorf("Acquire = %v; want Abandon's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Acquire did not give up after Abandon's error")
	}
	if err := held.Verify(); err != nil {
		t.Errorf("the holder lost its lock to an abandoned waiter: %v", err)
	}
	// Nothing to abandon: the waiter waits, and takes the lock once it
	// is free.
	var waited atomic.Int32
	go func() {
		l, err := Acquire(t.Context(), dir, Options{MinBackoff: time.Millisecond, Abandon: func() error {
			waited.Add(1)
			return nil
		}})
		if err == nil {
			err = l.Release()
		}
		done <- err
	}()
	for waited.Load() == 0 { // it found the lock held and is waiting
		time.Sleep(time.Millisecond)
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Acquire after the release = %v", err)
	}
}

// A waiter that may abandon wakes when the holder rewrites the locked file,
// and leaves then, not when the holder releases the lock (here never, and
// with backoff, the holder's refresh and staleness too far off to wake it).
func TestAcquireAbandonWakesOnFileChange(t *testing.T) {
	const stale = time.Minute
	dir := t.TempDir()
	file := filepath.Join(dir, "1.json")
	if err := os.WriteFile(file, []byte(`{"owner":""}`), 0o644); err != nil {
		t.Fatal(err)
	}
	held := mustTryAcquire(t, file+".lock", Options{Stale: stale})
	lost := errors.New("the task changed")
	var asked atomic.Int32
	done := make(chan error, 1)
	go func() {
		_, err := Acquire(t.Context(), file+".lock", Options{
			Stale:      stale,
			Watcher:    newWatcher(t),
			MinBackoff: time.Hour,
			Abandon: func() error {
				asked.Add(1)
				if b, _ := os.ReadFile(file); string(b) != `{"owner":""}` {
					return lost
				}
				return nil
			},
		})
		done <- err
	}()
	// The second question comes after the waiter subscribed to the folder.
	for asked.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(`{"owner":"a"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, lost) {
			t.Errorf("Acquire = %v; want Abandon's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("Acquire still waiting %v after the locked file changed; want it to wake and abandon", time.Since(start))
	}
	if err := held.Verify(); err != nil {
		t.Errorf("the holder lost its lock to an abandoned waiter: %v", err)
	}
}
