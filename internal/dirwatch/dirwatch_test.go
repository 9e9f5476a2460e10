package dirwatch

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/troupe-dev/troupe/internal/logtest"
)

// waitFor bounds every wait for an event in these tests.
const waitFor = 5 * time.Second

type mode struct {
	name  string
	opts  Options
	hooks hooks
}

// modes are the ways a Watcher can deliver kicks; most tests run in each.
func modes() []mode {
	emfile := func() (*fsnotify.Watcher, error) { return nil, syscall.EMFILE }
	return []mode{
		{name: "fsnotify"},
		{name: "forcepoll", opts: Options{ForcePoll: true, PollInterval: 10 * time.Millisecond}},
		{name: "fallback", opts: Options{PollInterval: 10 * time.Millisecond}, hooks: hooks{newFS: emfile}},
	}
}

// newTestWatcher returns a Watcher that is closed, and checked for leaked
// goroutines, when the test ends.
func newTestWatcher(t *testing.T, m mode) *Watcher {
	t.Helper()
	w, err := newWatcher(m.opts, m.hooks)
	if err != nil {
		t.Fatalf("newWatcher(%+v) error: %v", m.opts, err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close error: %v", err)
		}
		assertNoLeak(t)
	})
	return w
}

func subscribe(t *testing.T, w *Watcher, dir string, match func(string) bool) <-chan struct{} {
	t.Helper()
	ch, cancel, err := w.Subscribe(dir, match)
	if err != nil {
		t.Fatalf("Subscribe(%q) error: %v", dir, err)
	}
	t.Cleanup(cancel)
	return ch
}

func is(name string) func(string) bool { return func(n string) bool { return n == name } }

func wantKick(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitFor):
		t.Fatalf("no kick within %v after %s", waitFor, what)
	}
}

func wantNoKick(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Errorf("kick after %s; want none", what)
	default:
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKicks(t *testing.T) {
	ops := []struct {
		name  string
		setup func(t *testing.T, dir string) // before Subscribe
		op    func(t *testing.T, dir string)
	}{
		{name: "create", op: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "inbox.json"), "[]") }},
		{
			name:  "write",
			setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "inbox.json"), "[]") },
			op: func(t *testing.T, dir string) {
				f, err := os.OpenFile(filepath.Join(dir, "inbox.json"), os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.WriteString(" "); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name:  "rename over",
			setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "inbox.json"), "[]") },
			op: func(t *testing.T, dir string) {
				tmp := filepath.Join(dir, "inbox.json.tmp.0a1b2c3d")
				write(t, tmp, "[1]")
				if err := os.Rename(tmp, filepath.Join(dir, "inbox.json")); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name:  "remove",
			setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "inbox.json"), "[]") },
			op: func(t *testing.T, dir string) {
				if err := os.Remove(filepath.Join(dir, "inbox.json")); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name:  "chmod",
			setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "inbox.json"), "[]") },
			op: func(t *testing.T, dir string) {
				if err := os.Chmod(filepath.Join(dir, "inbox.json"), 0o600); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			// Same size, mtime set back: a poll sees it by the change time.
			name:  "rewrite keeping size and mtime",
			setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "inbox.json"), "[1]") },
			op: func(t *testing.T, dir string) {
				path := filepath.Join(dir, "inbox.json")
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte("[2]"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "lock dir mkdir",
			op: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, "inbox.json"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			for _, tt := range ops {
				t.Run(tt.name, func(t *testing.T) {
					w := newTestWatcher(t, m)
					dir := t.TempDir()
					if tt.setup != nil {
						tt.setup(t, dir)
					}
					ch := subscribe(t, w, dir, is("inbox.json"))
					tt.op(t, dir)
					wantKick(t, ch, tt.name)
				})
			}
		})
	}
}

// TestNonMatchingNoKick writes a name one subscriber ignores, then a
// sentinel another subscriber matches. Events (and each poll round's kicks)
// are handled in order, so once the sentinel kick arrives the ignored write
// has been handled too.
func TestNonMatchingNoKick(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			w := newTestWatcher(t, m)
			dir := t.TempDir()
			inbox := subscribe(t, w, dir, is("inbox.json"))
			sentinel := subscribe(t, w, dir, is("sentinel"))
			write(t, filepath.Join(dir, "other.json"), "[]")
			write(t, filepath.Join(dir, "inbox.json.tmp.0a1b2c3d"), "[]")
			write(t, filepath.Join(dir, "sentinel"), "x")
			wantKick(t, sentinel, "sentinel write")
			wantNoKick(t, inbox, "writes to non-matching names")
		})
	}
}

// TestCoalesce shows that a subscriber that does not read never blocks the
// Watcher: many writes leave one pending kick, and other subscribers keep
// receiving theirs.
func TestCoalesce(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			w := newTestWatcher(t, m)
			dir := t.TempDir()
			idle := subscribe(t, w, dir, is("inbox.json"))
			busy := subscribe(t, w, dir, is("sentinel"))
			for i := range 200 {
				write(t, filepath.Join(dir, "inbox.json"), strings.Repeat("x", i))
			}
			for i := range 3 {
				write(t, filepath.Join(dir, "sentinel"), strings.Repeat("x", i+1))
				wantKick(t, busy, "sentinel write")
			}
			if got := len(idle); got != 1 {
				t.Errorf("pending kicks after 200 writes = %d; want 1", got)
			}
			<-idle
			write(t, filepath.Join(dir, "inbox.json"), "again")
			wantKick(t, idle, "a write after draining")
		})
	}
}

func TestUnsubscribe(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			w := newTestWatcher(t, m)
			dir := t.TempDir()
			a, cancelA, err := w.Subscribe(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, cancelB, err := w.Subscribe(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			cancelA()
			cancelA() // idempotent
			write(t, filepath.Join(dir, "x"), "1")
			wantKick(t, b, "write with one subscriber left")
			wantNoKick(t, a, "write after cancel")
			if w.fsw != nil {
				if got := w.fsw.WatchList(); len(got) != 1 {
					t.Errorf("WatchList with one subscriber = %q; want one watch", got)
				}
			}
			cancelB()
			w.mu.Lock()
			n := len(w.dirs)
			w.mu.Unlock()
			if n != 0 {
				t.Errorf("watched dirs after last cancel = %d; want 0", n)
			}
			if w.fsw != nil {
				if got := w.fsw.WatchList(); len(got) != 0 {
					t.Errorf("WatchList after last cancel = %q; want none", got)
				}
			}
		})
	}
}

// TestSharedWatch checks that many subscribers of one directory, by
// different spellings, share one inotify watch.
func TestSharedWatch(t *testing.T) {
	w := newTestWatcher(t, mode{name: "fsnotify"})
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	var chans []<-chan struct{}
	for i := range 20 {
		d := dir
		if i%2 == 1 {
			d = link + "/"
		}
		chans = append(chans, subscribe(t, w, d, nil))
	}
	if got := w.fsw.WatchList(); len(got) != 1 {
		t.Errorf("WatchList with 20 subscribers = %q; want one watch", got)
	}
	write(t, filepath.Join(dir, "x"), "1")
	for _, ch := range chans {
		wantKick(t, ch, "write")
	}
}

// TestOverflowKicksEveryone is R14 of docs/benchmarks.md's rescan rule: after an
// event-queue overflow every subscriber of every directory is kicked.
func TestOverflowKicksEveryone(t *testing.T) {
	w := newTestWatcher(t, mode{name: "fsnotify"})
	d1, d2 := t.TempDir(), t.TempDir()
	chans := []<-chan struct{}{
		subscribe(t, w, d1, is("a")),
		subscribe(t, w, d1, is("b")),
		subscribe(t, w, d2, is("c")),
	}
	w.handleError(fsnotify.ErrEventOverflow)
	for i, ch := range chans {
		wantKick(t, ch, "overflow (subscriber "+string(rune('0'+i))+")")
	}
}

func TestWatchLimitFallsBackToPolling(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	full, ok := t.TempDir(), t.TempDir()
	fullCanon, err := filepath.EvalSymlinks(full)
	if err != nil {
		t.Fatal(err)
	}
	m := mode{
		name: "enospc",
		opts: Options{PollInterval: 10 * time.Millisecond, Logger: log},
		hooks: hooks{add: func(fsw *fsnotify.Watcher, dir string) error {
			if dir == fullCanon {
				return syscall.ENOSPC
			}
			return fsw.Add(dir)
		}},
	}
	w := newTestWatcher(t, m)
	polled := subscribe(t, w, full, nil)
	subscribe(t, w, full, nil) // same dir: no second attempt, no second warning
	watched := subscribe(t, w, ok, nil)
	if got := w.fsw.WatchList(); len(got) != 1 {
		t.Errorf("WatchList = %q; want only %q", got, ok)
	}
	write(t, filepath.Join(full, "x"), "1")
	wantKick(t, polled, "write in a polled dir")
	write(t, filepath.Join(ok, "x"), "1")
	wantKick(t, watched, "write in a watched dir")
	if got := strings.Count(buf.String(), "level=WARN"); got != 1 {
		t.Errorf("warnings logged = %d; want 1; log:\n%s", got, buf.String())
	}
}

func TestNewWatcherFailureWarnsOnce(t *testing.T) {
	var buf syncBuffer
	m := modes()[2]
	m.opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	w := newTestWatcher(t, m)
	if w.fsw != nil {
		t.Fatalf("fsnotify watcher created despite the injected EMFILE")
	}
	subscribe(t, w, t.TempDir(), nil)
	subscribe(t, w, t.TempDir(), nil)
	if got := strings.Count(buf.String(), "level=WARN"); got != 1 {
		t.Errorf("warnings logged = %d; want 1; log:\n%s", got, buf.String())
	}
}

func TestWatchedDirRemoved(t *testing.T) {
	w := newTestWatcher(t, mode{name: "fsnotify", opts: Options{PollInterval: 10 * time.Millisecond}})
	dir := filepath.Join(t.TempDir(), "inboxes")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ch := subscribe(t, w, dir, is("inbox.json"))
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	wantKick(t, ch, "removing the watched directory")
	// Re-created, the directory is polled and changes show up again.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "inbox.json"), "[]")
	wantKick(t, ch, "a write in the re-created directory")
}

func TestSubscribeErrors(t *testing.T) {
	w := newTestWatcher(t, mode{name: "fsnotify"})
	file := filepath.Join(t.TempDir(), "file")
	write(t, file, "x")
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name    string
		dir     string
		wantIs  error
		wantMsg string
	}{
		{name: "missing", dir: missing, wantIs: fs.ErrNotExist, wantMsg: missing},
		{name: "not a directory", dir: file, wantMsg: file},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := w.Subscribe(tt.dir, nil)
			if err == nil || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Subscribe(%q) error = %v; want an error naming %q (is %v)", tt.dir, err, tt.wantMsg, tt.wantIs)
			}
		})
	}
}

func TestClose(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			w, err := newWatcher(m.opts, m.hooks)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			_, cancel, err := w.Subscribe(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Errorf("Close error: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Errorf("second Close error: %v", err)
			}
			cancel() // after Close: a no-op
			if _, _, err := w.Subscribe(dir, nil); !errors.Is(err, ErrClosed) {
				t.Errorf("Subscribe after Close error = %v; want %v", err, ErrClosed)
			}
			assertNoLeak(t)
		})
	}
}

func TestConcurrentSubscribeClose(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := 0; ; j++ {
				_, cancel, err := w.Subscribe(dirs[(i+j)%len(dirs)], nil)
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Subscribe error: %v", err)
					return
				}
				if err := os.WriteFile(filepath.Join(dirs[i%len(dirs)], "x"), []byte("1"), 0o644); err != nil {
					t.Errorf("WriteFile error: %v", err)
				}
				cancel()
			}
		})
	}
	for i := range 50 {
		write(t, filepath.Join(dirs[i%len(dirs)], "y"), "1")
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close error: %v", err)
	}
	wg.Wait()
	assertNoLeak(t)
}

// assertNoLeak waits until no goroutine of this package or of fsnotify is
// left, and fails if one remains.
func assertNoLeak(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		var leaked []string
		// The first stack is this goroutine's. A goroutine that has not run
		// yet shows only its creator, hence the match on any fsnotify frame.
		for _, g := range strings.Split(stacks, "\n\n")[1:] {
			if strings.Contains(g, "dirwatch.(*Watcher)") || strings.Contains(g, "github.com/fsnotify/fsnotify.") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines leaked after Close:\n%s", strings.Join(leaked, "\n\n"))
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// syncBuffer collects the logger's concurrent writes.
type syncBuffer = logtest.Buffer
