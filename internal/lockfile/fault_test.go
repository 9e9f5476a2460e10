//go:build unix

package lockfile

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/dirwatch"
)

func newWatcher(t *testing.T) *dirwatch.Watcher {
	t.Helper()
	w, err := dirwatch.New(dirwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestKilledHolder is R1 of docs/benchmarks.md: a holder killed with SIGKILL leaves
// its lock directory; a waiter takes it once it is stale, and everything
// keeps working.
func TestKilledHolder(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "inbox.json.lock")
	holder := startChild(t, "holder", dir)
	holder.expect("held")
	if err := holder.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	start := time.Now()
	l, err := Acquire(ctx, dir, Options{Stale: testStale, Watcher: newWatcher(t)})
	if err != nil {
		t.Fatalf("Acquire after the holder was killed = %v; want nil", err)
	}
	t.Logf("took the dead holder's lock after %v (stale %v)", time.Since(start).Round(time.Millisecond), testStale)
	if err := l.Verify(); err != nil {
		t.Errorf("Verify() = %v; want nil", err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("Release() = %v; want nil", err)
	}
	assertNoStaleLeftovers(t, base)
	l2, err := TryAcquire(dir, Options{Stale: testStale})
	if err != nil {
		t.Fatalf("TryAcquire after release = %v; want nil", err)
	}
	l2.Release()
}

// TestPausedHolder is R2 of docs/benchmarks.md: a holder paused (SIGSTOP) past the
// stale time loses the lock to another process, which writes; resumed, the
// paused holder's Verify fails, so its commit is refused, Lost is closed,
// and its Release leaves the new holder's lock alone.
func TestPausedHolder(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "inbox.json.lock")
	data := filepath.Join(base, "inbox.json")
	holder := startChild(t, "holder", dir)
	holder.expect("held")
	if err := holder.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			holder.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()

	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	l, err := Acquire(ctx, dir, Options{Stale: testStale, Watcher: newWatcher(t)})
	if err != nil {
		t.Fatalf("Acquire while the holder is paused = %v; want nil", err)
	}
	if err := atomicfile.WriteFile(data, []byte("newer"), 0o644, atomicfile.Options{BeforeCommit: l.Verify}); err != nil {
		t.Fatalf("commit by the new holder = %v; want nil", err)
	}

	if err := holder.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	holder.send("commit " + data + " stale")
	holder.expect("commit compromised")
	holder.send("lost")
	holder.expect("lost closed")
	holder.send("release")
	holder.expect("release compromised")
	holder.send("exit")
	holder.wait()

	if b, err := os.ReadFile(data); err != nil || string(b) != "newer" {
		t.Errorf("data = %q, %v; want %q (the paused holder must not overwrite it)", b, err, "newer")
	}
	if err := l.Verify(); err != nil {
		t.Errorf("new holder Verify() after the old one's Release = %v; want nil", err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("new holder Release() = %v; want nil", err)
	}
	assertNoStaleLeftovers(t, base)
}

// TestLongHold is R10 of docs/benchmarks.md: a live holder that keeps the lock for
// three stale periods refreshes it and is never judged stale by a waiter,
// which gets the lock only after the release. Stale is 4 s (refresh every
// 2 s) so that a loaded machine cannot starve the refresher for a whole
// stale period; the test still fits inside TestNodeInterop's time.
func TestLongHold(t *testing.T) {
	t.Parallel()
	const stale = 2 * testStale
	dir := filepath.Join(t.TempDir(), "inbox.json.lock")
	holder := startChild(t, "holder", dir, stale.String())
	holder.expect("held")

	got := make(chan error, 1)
	go func() {
		l, err := Acquire(t.Context(), dir, Options{Stale: stale, Watcher: newWatcher(t)})
		if err == nil {
			err = l.Release()
		}
		got <- err
	}()
	// The hold itself: three stale periods, during which the waiter must
	// not get the lock.
	select {
	case err := <-got:
		t.Fatalf("waiter returned (%v) while the holder was alive; want it to wait", err)
	case <-time.After(3 * stale):
	}
	holder.send("verify")
	holder.expect("verify ok")
	holder.send("lost")
	holder.expect("lost open")
	holder.send("release")
	holder.expect("release ok")
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("waiter Acquire after release = %v; want nil", err)
		}
	case <-time.After(waitFor):
		t.Fatalf("waiter did not get the lock within %v of the release", waitFor)
	}
	holder.send("exit")
	holder.wait()
}
