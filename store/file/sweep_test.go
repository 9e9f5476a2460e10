package file_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// plantTemp writes a temp file as a writer killed before its rename leaves
// it, last modified age ago.
func plantTemp(t *testing.T, path string, age time.Duration) {
	t.Helper()
	if err := os.WriteFile(path, []byte(`{"half":`), 0o644); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-age)
	if err := os.Chtimes(path, then, then); err != nil {
		t.Fatal(err)
	}
}

// The temp files of a writer killed between writing and renaming (a
// claimer, an inbox writer, a team file writer) are removed by the next
// writer of their folder (of a task list, the next reader: a claim reads
// the list first) once they are stale; fresh ones, which may belong to a
// live writer, stay.
func TestStaleTempFilesSwept(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftNewTeam(t, s, "crew")
	if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: "w"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	ftCreateTasks(t, s, "crew", 2)

	listDir := filepath.Join(root, "tasks", "crew")
	inboxDir := filepath.Join(root, "teams", "crew", "inboxes")
	teamDir := filepath.Join(root, "teams", "crew")
	stale := []string{
		filepath.Join(listDir, "1.json.tmp.0a1b2c3d"),
		filepath.Join(inboxDir, "w.json.tmp.deadbeef"),
		filepath.Join(teamDir, "config.json.tmp.cafef00d"),
	}
	fresh := filepath.Join(listDir, "2.json.tmp.12345678")
	for _, p := range stale {
		plantTemp(t, p, 10*time.Minute)
	}
	plantTemp(t, fresh, 0)

	// A new Store, as the next process to write would open it.
	s2 := ftOpen(t, root, file.Options{})
	if _, err := tasklist.New(s2.Tasks(), "crew").Claim(ctx, "w"); err != nil {
		t.Fatalf("Claim = %v", err)
	}
	if _, err := s2.Mail().Send(ctx, "crew", "w", mailbox.Message{From: "team-lead", Text: "hi"}); err != nil {
		t.Fatalf("Send = %v", err)
	}
	if _, err := s2.Teams().Update(ctx, "crew", func(c *team.Config) error { c.Description = "swept"; return nil }); err != nil {
		t.Fatalf("Update = %v", err)
	}
	for _, p := range stale {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("stale temp file %s is still there after a write to its folder", p)
		}
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Errorf("fresh temp file %s was removed: %v", fresh, err)
	}
}
