package file_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
)

// subjects lists list and returns each task's subject by id.
func subjects(t *testing.T, s *file.Store, list string) map[string]string {
	t.Helper()
	entries, err := s.Tasks().List(t.Context(), list)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		out[e.Task.ID] = e.Task.Subject
	}
	return out
}

// TestTaskListCache: a listing takes a task file that has not changed
// since the last listing from its cache, and reads every file that did:
// rewritten by rename, rewritten in place with the same size and its
// modification time set back (as Claude Code's in-place writes and a copy
// tool could), or deleted. A file whose times are too recent to tell a
// later rewrite apart is read again each time.
func TestTaskListCache(t *testing.T) {
	s := ftOpen(t, t.TempDir(), file.Options{})
	// Files count as written a second earlier than they were: past the
	// cache's racy window (50 ms) at once, so a listing trusts them.
	file.AgeTaskCache(s, time.Second)
	ctx := t.Context()
	l := tasklist.New(s.Tasks(), "cache")
	for _, subj := range []string{"alpha", "bravo"} {
		if _, err := l.Create(ctx, tasklist.Draft{Subject: subj}); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(s.Root(), "tasks", "cache")
	subjects(t, s, "cache") // fills the cache
	if !file.SetCachedTaskSubject(s, "cache", "1", "from the cache") {
		t.Fatal("task 1 is not cached after a listing of settled files")
	}
	if got := subjects(t, s, "cache")["1"]; got != "from the cache" {
		t.Fatalf("task 1 unchanged since the last listing = %q; want it taken from the cache", got)
	}

	t.Run("rewritten by rename", func(t *testing.T) {
		subj := "charlie"
		if _, err := l.Update(ctx, "1", tasklist.Update{Subject: &subj}); err != nil {
			t.Fatal(err)
		}
		if got := subjects(t, s, "cache")["1"]; got != "charlie" {
			t.Fatalf("task 1 after an update = %q; want charlie", got)
		}
	})

	t.Run("rewritten in place, same size, time set back", func(t *testing.T) {
		path := filepath.Join(dir, "2.json")
		for i, to := range []string{"bravX", "bravY", "bravZ"} {
			before := subjects(t, s, "cache")["2"]
			if !file.SetCachedTaskSubject(s, "cache", "2", "stale") {
				t.Fatalf("round %d: task 2 not cached", i)
			}
			ftRewriteSameSize(t, path, `"`+before+`"`, `"`+to+`"`)
			if got := subjects(t, s, "cache")["2"]; got != to {
				t.Fatalf("round %d: task 2 after an in-place rewrite = %q; want %q", i, got, to)
			}
		}
	})

	t.Run("times too recent", func(t *testing.T) {
		path := filepath.Join(dir, "2.json")
		future := time.Now().Add(time.Hour) // changed "now" for as long as the test runs
		if err := os.Chtimes(path, future, future); err != nil {
			t.Fatal(err)
		}
		want := subjects(t, s, "cache")["2"]
		file.SetCachedTaskSubject(s, "cache", "2", "stale") // if it was kept at all
		if got := subjects(t, s, "cache")["2"]; got != want {
			t.Fatalf("task 2 with a recent change time = %q; want %q read again", got, want)
		}
	})

	t.Run("deleted", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, "2.json")); err != nil {
			t.Fatal(err)
		}
		if got, ok := subjects(t, s, "cache")["2"]; ok {
			t.Fatalf("deleted task 2 still listed (%q)", got)
		}
		if file.SetCachedTaskSubject(s, "cache", "2", "stale") {
			t.Fatal("deleted task 2 still cached after a listing")
		}
	})
}
