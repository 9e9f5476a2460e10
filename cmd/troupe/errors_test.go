package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/cli"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// TestBadInput checks that bad input fails with a message naming the
// argument, flag or value at fault, and leaves the stores as they were.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		want  []string // substrings of the error
		usage bool     // want a *UsageError (exit status 2)
	}{
		{"unknown command", []string{"tema"}, []string{`unknown command "tema"`, "team"}, true},
		{"unknown subcommand", []string{"team", "lst"}, []string{`unknown command "lst"`, "list"}, true},
		{"unknown flag", []string{"team", "list", "--bogus"}, []string{"--bogus"}, true},
		{"missing argument", []string{"team", "show"}, []string{"missing argument NAME"}, true},
		{"extra argument", []string{"team", "show", "alpha", "beta"}, []string{`unexpected argument "beta"`}, true},
		{"missing required flag", []string{"task", "list"}, []string{`"team"`}, true},
		{"invalid team name", []string{"team", "create", "../x"}, []string{"NAME", `"../x"`, "path separator"}, true},
		{"invalid team flag", []string{"task", "list", "--team", "../x"}, []string{"--team", `"../x"`}, true},
		{"invalid member name", []string{"team", "add", "alpha", "bad name"}, []string{"MEMBER", `"bad name"`}, true},
		{"reserved member name", []string{"team", "add", "alpha", "user"}, []string{"MEMBER", "reserved"}, true},
		{"bad color", []string{"team", "add", "alpha", "carol", "--color", "mauve"}, []string{"--color", "mauve", "blue"}, true},
		{"unknown team", []string{"team", "show", "gamma"}, []string{`unknown team "gamma"`, "alpha"}, false},
		{"unknown team flag", []string{"inbox", "read", "--team", "gamma", "--agent", "alice"}, []string{"--team", `unknown team "gamma"`, "alpha"}, false},
		{"unknown recipient", []string{"inbox", "send", "--team", "alpha", "--from", "bob", "--to", "carol", "hi"}, []string{"--to", `"carol"`, "alice", "bob", "team-lead"}, false},
		{"unknown sender", []string{"inbox", "send", "--team", "alpha", "--from", "carol", "--to", "bob", "hi"}, []string{"--from", `"carol"`, "alice"}, false},
		{"unknown reader", []string{"inbox", "read", "--team", "alpha", "--agent", "Alice"}, []string{"--agent", `"Alice"`, `did you mean "alice"`}, false},
		{"empty message", []string{"inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", " "}, []string{"TEXT", "empty"}, true},
		{"bad status", []string{"task", "update", "--team", "alpha", "1", "--status", "done"}, []string{"--status", `"done"`, "in_progress"}, true},
		{"bad task id", []string{"task", "get", "--team", "alpha", "one"}, []string{"ID", `"one"`, "not a task id"}, true},
		{"zero task id", []string{"task", "claim", "--team", "alpha", "--agent", "bob", "0"}, []string{"ID", `"0"`}, true},
		{"bad blocks id", []string{"task", "create", "--team", "alpha", "--subject", "x", "--blocks", "1,x"}, []string{"--blocks", `"x"`}, true},
		{"unknown blocks id", []string{"task", "create", "--team", "alpha", "--subject", "x", "--blocked-by", "9"}, []string{"9"}, false},
		{"malformed metadata", []string{"task", "create", "--team", "alpha", "--subject", "x", "--metadata", "k=not json"}, []string{"--metadata", "k=not json", "not JSON"}, true},
		{"metadata without key", []string{"task", "update", "--team", "alpha", "1", "--metadata", "=1"}, []string{"--metadata", "KEY=JSON"}, true},
		{"empty subject", []string{"task", "create", "--team", "alpha", "--subject", " "}, []string{"--subject", "empty"}, true},
		{"unknown task", []string{"task", "get", "--team", "alpha", "7"}, []string{"no task 7 in team alpha"}, false},
		{"update unknown task", []string{"task", "update", "--team", "alpha", "7", "--subject", "x"}, []string{"no task 7 in team alpha"}, false},
		{"claim unknown task", []string{"task", "claim", "--team", "alpha", "--agent", "bob", "7"}, []string{"no task 7 in team alpha"}, false},
		{"claimer not on roster", []string{"task", "claim", "--team", "alpha", "--agent", "carol"}, []string{"--agent", `"carol"`, "alice"}, false},
		{"owner not on roster", []string{"task", "update", "--team", "alpha", "1", "--owner", "carol"}, []string{"--owner", `"carol"`}, false},
	}
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		h.ok("task", "create", "--team", "alpha", "--subject", "first")
		before := snapshot(t, h)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := h.fail(tt.args...)
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("troupe %s: %q; want it to mention %s", strings.Join(tt.args, " "), err, w)
					}
				}
				if got := isUsage(err); got != tt.usage {
					t.Errorf("troupe %s: usage error = %v; want %v (%v)", strings.Join(tt.args, " "), got, tt.usage, err)
				}
			})
		}
		if diff := cmp.Diff(before, snapshot(t, h)); diff != "" {
			t.Errorf("failed commands changed the stores (-before +after):\n%s", diff)
		}
	})
}

// state is everything stored, in comparable form.
type state struct {
	Teams []team.Config
	Tasks []tasklist.Task
	Inbox map[string][]mailbox.Message
}

func snapshot(t *testing.T, h *harness) state {
	t.Helper()
	s, err := h.openStore(h.home)
	if err != nil {
		t.Fatal(err)
	}
	if s.Close != nil {
		defer s.Close()
	}
	ctx := t.Context()
	var st state
	if st.Teams, err = s.Teams.List(ctx); err != nil {
		t.Fatal(err)
	}
	if st.Tasks, err = tasklist.New(s.Tasks, "alpha").Tasks(ctx); err != nil {
		t.Fatal(err)
	}
	st.Inbox = map[string][]mailbox.Message{}
	for _, n := range []string{team.LeadName, "alice", "bob"} {
		if st.Inbox[n], err = s.Mail.Read(ctx, "alpha", n, false); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// TestMalformedFiles checks that a file the store cannot read is named in
// the error, and that nothing in it is lost.
func TestMalformedFiles(t *testing.T) {
	h := &harness{t: t, home: t.TempDir(), openStore: cli.OpenFileStore}
	h.roster()
	h.ok("team", "create", "beta")
	h.ok("task", "create", "--team", "alpha", "--subject", "one")
	h.ok("task", "create", "--team", "alpha", "--subject", "two")
	h.ok("inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "hi")

	write := func(rel, content string) string {
		t.Helper()
		p := filepath.Join(h.home, filepath.FromSlash(rel))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keep := func(p, want string) {
		t.Helper()
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q kept", p, b, err, want)
		}
	}

	teamFile := write("teams/beta/config.json", `{"name": 5`)
	err := h.fail("team", "show", "beta")
	if !strings.Contains(err.Error(), teamFile) {
		t.Errorf("team show of a malformed team file: %v; want the file named", err)
	}
	r := h.exec("", "team", "list")
	if r.err == nil || !strings.Contains(r.err.Error(), teamFile) || !strings.Contains(r.stdout, "alpha") {
		t.Errorf("team list with a malformed team file: %v, stdout %q; want alpha listed and the file named", r.err, r.stdout)
	}
	keep(teamFile, `{"name": 5`)

	taskFile := write("tasks/alpha/2.json", `{"id":"2","subject":3}`)
	r = h.exec("", "task", "list", "--team", "alpha")
	if r.err == nil || !strings.Contains(r.err.Error(), taskFile) || !strings.Contains(r.err.Error(), "subject") || !strings.Contains(r.stdout, "one") {
		t.Errorf("task list with a malformed task: %v, stdout %q; want task 1 listed and the file and field named", r.err, r.stdout)
	}
	keep(taskFile, `{"id":"2","subject":3}`)

	write("teams/alpha/inboxes/alice.json", `[{"from":`)
	err = h.fail("inbox", "read", "--team", "alpha", "--agent", "alice")
	if !errors.Is(err, mailbox.ErrCorrupt) || !strings.Contains(err.Error(), "moved aside") {
		t.Errorf("inbox read of a malformed inbox: %v; want it reported as moved aside", err)
	}
	var ce *mailbox.CorruptError
	if errors.As(err, &ce) {
		keep(ce.MovedTo, `[{"from":`)
	}
	h.ok("inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "after")
	if out := h.ok("inbox", "read", "--team", "alpha", "--agent", "alice"); !strings.Contains(out, "after") {
		t.Errorf("inbox after the corrupt one was moved aside:\n%s\nwant the new message", out)
	}
}
