package file_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// plantLink replaces path (created if missing) with a symbolic link to a
// fresh folder elsewhere, holding a copy of path's files, and returns that
// folder.
func plantLink(t *testing.T, path string) string {
	t.Helper()
	elsewhere := t.TempDir()
	if des, err := os.ReadDir(path); err == nil {
		for _, de := range des {
			if b, err := os.ReadFile(filepath.Join(path, de.Name())); err == nil {
				os.WriteFile(filepath.Join(elsewhere, de.Name()), b, 0o644)
			}
		}
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, path); err != nil {
		t.Fatal(err)
	}
	return elsewhere
}

// wantLinkErr fails unless err matches file.ErrSymlink and names link.
func wantLinkErr(t *testing.T, what string, err error, link string) {
	t.Helper()
	if !errors.Is(err, file.ErrSymlink) || !strings.Contains(err.Error(), link) {
		t.Errorf("%s = %v; want an error matching ErrSymlink naming %s", what, err, link)
	}
}

// Folders under the root that are symbolic links are refused, never
// followed: a task list, a team folder, an agent's spool folder.
func TestSymlinkedFoldersRefused(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{LockTimeout: time.Second})
	ctx := t.Context()

	t.Run("task list", func(t *testing.T) {
		ftCreateTasks(t, s, "linked", 1)
		link := filepath.Join(root, "tasks", "linked")
		elsewhere := plantLink(t, link)
		_, _, err := s.Tasks().Create(ctx, "linked", tasklist.Task{Subject: "through the link"})
		wantLinkErr(t, "Create in a linked list", err, link)
		_, err = s.Tasks().List(ctx, "linked")
		wantLinkErr(t, "List of a linked list", err, link)
		_, _, err = s.Tasks().Get(ctx, "linked", "1")
		wantLinkErr(t, "Get in a linked list", err, link)
		if _, err := os.Stat(filepath.Join(elsewhere, "2.json")); err == nil {
			t.Errorf("a task was written through the link")
		}
	})

	t.Run("team folder", func(t *testing.T) {
		ftNewTeam(t, s, "linkteam")
		link := filepath.Join(root, "teams", "linkteam")
		plantLink(t, link)
		_, err := s.Teams().Get(ctx, "linkteam")
		wantLinkErr(t, "Get of a linked team", err, link)
		_, err = s.Teams().List(ctx)
		wantLinkErr(t, "List with a linked team", err, link)
		_, err = s.Mail().Send(ctx, "linkteam", "team-lead", mailbox.Message{From: "x", Text: "hi"})
		wantLinkErr(t, "Send to a linked team", err, link)
	})

	t.Run("spool folder", func(t *testing.T) {
		ftNewTeam(t, s, "spoolteam")
		if _, err := team.AddMember(ctx, s.Teams(), "spoolteam", team.Member{Name: "w"}, time.Now()); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(root, "teams", "spoolteam", "inboxes", ".spool", "w")
		elsewhere := plantLink(t, link)
		_, err := s.Mail().Send(ctx, "spoolteam", "w", mailbox.Message{From: "team-lead", Text: "hi"})
		wantLinkErr(t, "Send with a linked spool", err, link)
		_, err = s.Mail().Read(ctx, "spoolteam", "w", false)
		wantLinkErr(t, "Read with a linked spool", err, link)
		if des, _ := os.ReadDir(elsewhere); len(des) != 0 {
			t.Errorf("the send wrote %d entries through the link", len(des))
		}
	})
}
