package lockfile

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/dirwatch"
)

func TestRenameNoReplace(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := renameNoReplace(a, b); !errors.Is(err, os.ErrExist) {
		t.Errorf("renameNoReplace onto an existing dir = %v; want ErrExist", err)
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if err := renameNoReplace(a, b); err != nil {
		t.Errorf("renameNoReplace onto a free name = %v; want nil", err)
	}
}

// TestMoveLiveLock drives the branches of reclaim that only races reach: a
// reclaimer that judged an old lock stale moves a live lock instead.
func TestMoveLiveLock(t *testing.T) {
	tests := []struct {
		name           string
		takenMeanwhile bool // someone mkdirs the name before the put-back
		wantVerify     error
	}{
		{"put back", false, nil},
		{"name taken again: victim compromised", true, ErrCompromised},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := lockPath(t)
			victim := mustTryAcquire(t, dir, Options{})
			judged := ident{dev: victim.id.dev, ino: victim.id.ino + 1, mtime: 1} // an older lock
			putBack := renameNoReplace
			if tt.takenMeanwhile {
				putBack = func(from, to string) error {
					if err := os.Mkdir(to, 0o755); err != nil {
						return err
					}
					return renameNoReplace(from, to)
				}
			}
			if err := moveAndRemove(dir, judged, slog.New(slog.DiscardHandler), putBack); err != nil {
				t.Fatalf("moveAndRemove = %v; want nil", err)
			}
			if err := victim.Verify(); !errors.Is(err, tt.wantVerify) {
				t.Errorf("victim Verify() = %v; want %v", err, tt.wantVerify)
			}
			assertNoStaleLeftovers(t, filepath.Dir(dir))
		})
	}
}

// TestReclaimRace is R11 of docs/benchmarks.md (proper-lockfile#121): several
// reclaimers, in this process and in others, race for the same stale lock,
// round after round. Every holder marks the critical section with an
// exclusive marker file; two holders at once would collide on it.
func TestReclaimRace(t *testing.T) {
	t.Parallel()
	const rounds = 50
	tests := []struct {
		name                 string
		goroutines, children int
	}{
		{"goroutines", 6, 0},
		{"processes", 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "inbox.json.lock")
			marker := filepath.Join(base, "inside")
			w, err := dirwatch.New(dirwatch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			logger, logs := testLogger(t)
			var children []*child
			for range tt.children {
				children = append(children, startChild(t, "reclaimer", dir, marker))
			}
			for round := range rounds {
				makeStale(t, dir, time.Minute)
				start := make(chan struct{})
				errs := make(chan error, tt.goroutines)
				var wg sync.WaitGroup
				for range tt.goroutines {
					wg.Go(func() {
						<-start
						errs <- holdBriefly(dir, marker, Options{Stale: testStale, Watcher: w, Logger: logger})
					})
				}
				for _, c := range children {
					c.send("go")
				}
				close(start)
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Errorf("round %d: goroutine holder: %v", round, err)
					}
				}
				for i, c := range children {
					if got := c.next(); got != "done ok" {
						t.Errorf("round %d: child %d said %q; want %q", round, i, got, "done ok")
					}
				}
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("round %d: lock directory left after every holder released (stat: %v)", round, err)
				}
				assertNoStaleLeftovers(t, base)
				if t.Failed() {
					t.FailNow()
				}
			}
			for _, c := range children {
				c.wait()
				logs.Write([]byte(c.stderr.String()))
			}
			// Reclaimers never move a live lock (that takes a pause of a stale
			// period inside reclaim), so nothing is worth a warning.
			if strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("warnings logged by reclaimers:\n%s", logs.String())
			}
		})
	}
}

// TestMutualExclusion: goroutines and processes increment one counter file
// under the lock; the final count is exact.
func TestMutualExclusion(t *testing.T) {
	t.Parallel()
	const (
		goroutines = 8
		children   = 4
		each       = 50
	)
	base := t.TempDir()
	dir := filepath.Join(base, "counter.lock")
	counter := filepath.Join(base, "counter")
	marker := filepath.Join(base, "inside")
	w, err := dirwatch.New(dirwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	var procs []*child
	for range children {
		procs = append(procs, startChild(t, "counter", dir, counter, marker, fmt.Sprint(each)))
	}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				if err := incrementUnderLock(dir, counter, marker, Options{Watcher: w}); err != nil {
					t.Errorf("increment: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, c := range procs {
		c.expect("done")
		c.wait()
	}
	b, err := os.ReadFile(counter)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), fmt.Sprint((goroutines+children)*each); got != want {
		t.Errorf("counter = %s; want %s", got, want)
	}
}

// testLogger returns a logger that writes to t's log and to a buffer.
func testLogger(t *testing.T) (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	h := slog.NewTextHandler(io.MultiWriter(tWriter{t}, buf), &slog.HandlerOptions{Level: slog.LevelInfo})
	return slog.New(h), buf
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
