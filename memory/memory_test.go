package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	dir := Dir(t.TempDir(), "/src/my app")
	if got, err := Load(dir, 0); got != "" || err != nil {
		t.Errorf("Load(missing) = %q, %v; want nothing", got, err)
	}
	write(t, filepath.Join(dir, "b-topic.md"), "B-TOPIC")
	write(t, filepath.Join(dir, "a-topic.md"), "A-TOPIC")
	write(t, filepath.Join(dir, Index), "- [a](a-topic.md)\n- [b](b-topic.md)\nINDEX")
	write(t, filepath.Join(dir, "notes.txt"), "NOT-MEMORY")
	got, err := Load(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	iIdx, iA, iB := strings.Index(got, "INDEX"), strings.Index(got, "A-TOPIC"), strings.Index(got, "B-TOPIC")
	if iIdx < 0 || iA < iIdx || iB < iA || strings.Contains(got, "NOT-MEMORY") || !strings.HasPrefix(got, "<memory>") {
		t.Errorf("Load = %q; want the index, then the topics by name, no other files", got)
	}
	// Over the budget: the index stays, the topics that do not fit are named.
	write(t, filepath.Join(dir, "b-topic.md"), strings.Repeat("b", 2000))
	got, _ = Load(dir, 1000)
	if len(got) > 1200 || !strings.Contains(got, "INDEX") || !strings.Contains(got, "not loaded: b-topic.md") {
		t.Errorf("Load(cap 1000) = %d bytes:\n%s", len(got), got)
	}
	// A huge index is cut, not dropped.
	write(t, filepath.Join(dir, Index), strings.Repeat("é", 5000))
	got, _ = Load(dir, 1000)
	if !strings.Contains(got, "MEMORY.md (cut)") || !strings.Contains(got, "éé") || len(got) > 1300 {
		t.Errorf("Load(big index) = %d bytes:\n%s", len(got), got)
	}
}

func TestGuard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	g := Guard(dir)
	for path, ok := range map[string]bool{
		filepath.Join(dir, "topic.md"):              true,
		filepath.Join(dir, Index):                   true,
		filepath.Join(dir, "..", "escape.md"):       false,
		filepath.Join(dir, "sub", "x.md"):           false,
		filepath.Join(dir, "script.sh"):             false,
		dir:                                         false,
		"/etc/passwd":                               false,
		filepath.Join(dir+"-other", "x.md"):         false,
		filepath.Join(dir, "a", "..", "..", "x.md"): false,
	} {
		if err := g(context.Background(), path); (err == nil) != ok {
			t.Errorf("Guard(%s) = %v; want allowed %v", path, err, ok)
		}
	}
}

func TestLockRollbackAndRelease(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	l := Lock{Dir: dir, Now: func() time.Time { return clock }}
	if last, _ := l.Last(); !last.IsZero() {
		t.Fatalf("Last of a new folder = %v", last)
	}
	// A first dream fails: no dream on record again.
	h, err := l.Acquire()
	if err != nil || !h.Prior.IsZero() {
		t.Fatalf("Acquire = %+v, %v", h, err)
	}
	if err := h.Rollback(); err != nil {
		t.Fatal(err)
	}
	if last, _ := l.Last(); !last.IsZero() {
		t.Errorf("after a rolled-back first dream Last = %v; want none", last)
	}
	// A dream that succeeds records its start.
	h, _ = l.Acquire()
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if last, _ := l.Last(); !last.Equal(clock) {
		t.Errorf("Last = %v; want %v", last, clock)
	}
	// A later one that fails restores that time.
	clock = clock.Add(25 * time.Hour)
	h, err = l.Acquire()
	if err != nil || !h.Prior.Equal(clock.Add(-25*time.Hour)) {
		t.Fatalf("Acquire = %+v, %v", h, err)
	}
	if last, _ := l.Last(); !last.Equal(clock) {
		t.Errorf("while dreaming Last = %v; want the new start", last)
	}
	if err := h.Rollback(); err != nil {
		t.Fatal(err)
	}
	if last, _ := l.Last(); !last.Equal(clock.Add(-25 * time.Hour)) {
		t.Errorf("after rollback Last = %v; want the previous dream's time", last)
	}
}

// Two sessions never dream at once: of many concurrent Acquires exactly
// one wins until it releases; a hold older than Stale is taken over.
func TestLockExcludes(t *testing.T) {
	dir := t.TempDir()
	l := Lock{Dir: dir}
	var mu sync.Mutex
	var won []*Held
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			h, err := l.Acquire()
			if err != nil && !errors.Is(err, ErrBusy) {
				t.Error(err)
			}
			if h != nil {
				mu.Lock()
				won = append(won, h)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("%d Acquires won; want 1", len(won))
	}
	if _, err := l.Acquire(); !errors.Is(err, ErrBusy) {
		t.Errorf("Acquire while held = %v; want ErrBusy", err)
	}
	later := Lock{Dir: dir, Now: func() time.Time { return time.Now().Add(2 * DefaultStale) }}
	h, err := later.Acquire()
	if err != nil {
		t.Fatalf("Acquire of a stale hold = %v", err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if h, err := l.Acquire(); err != nil {
		t.Errorf("Acquire after release = %v", err)
	} else {
		_ = h.Release()
	}
}

func TestDueAndSessions(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		last     time.Time
		sessions int
		want     bool
	}{
		{"never dreamed, enough sessions", time.Time{}, 5, true},
		{"never dreamed, too few", time.Time{}, 4, false},
		{"recent", now.Add(-time.Hour), 9, false},
		{"long ago", now.Add(-25 * time.Hour), 5, true},
	}
	for _, tt := range tests {
		if got := Due(now, tt.last, tt.sessions, 24*time.Hour, 5); got != tt.want {
			t.Errorf("%s: Due = %v; want %v", tt.name, got, tt.want)
		}
	}
	dir := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	for _, s := range []string{"s-old", "s-new", "s-current"} {
		write(t, filepath.Join(dir, s, "lead.jsonl"), "{}")
	}
	for _, p := range []string{filepath.Join(dir, "s-old", "lead.jsonl"), filepath.Join(dir, "s-old")} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	got, err := SessionsSince(dir, time.Now().Add(-time.Hour), "s-current")
	if err != nil || len(got) != 1 || got[0] != "s-new" {
		t.Errorf("SessionsSince = %v, %v; want [s-new]", got, err)
	}
}

func writeFileErr(path, s string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

// A lock file that cannot be written fails Acquire (and frees the hold)
// instead of reporting a lock that was never taken.
func TestLockWriteFails(t *testing.T) {
	l := Lock{Dir: t.TempDir()}
	if err := os.Mkdir(filepath.Join(l.Dir, LockName), 0o755); err != nil { // a folder where the file goes
		t.Fatal(err)
	}
	if h, err := l.Acquire(); err == nil {
		t.Fatalf("Acquire over an unwritable lock file = %+v, nil; want an error", h)
	}
	if _, err := os.Stat(filepath.Join(l.Dir, LockName+".held")); !os.IsNotExist(err) {
		t.Errorf("the hold is left behind: %v", err)
	}
}
