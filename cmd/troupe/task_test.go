package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/cli/taskcmd"
	"github.com/troupe-dev/troupe/tasklist"
)

func TestTaskCommands(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		var t1, t2, t3 tasklist.Task
		h.json(&t1, "task", "create", "--team", "alpha", "--subject", "Write the parser", "--active-form", "Writing the parser",
			"--metadata", `priority=1`, "--metadata", `tags=["go","parser"]`)
		h.json(&t2, "task", "create", "--team", "alpha", "--subject", "Test the parser", "--description", "table tests", "--blocked-by", "1")
		out := h.ok("task", "create", "--team", "alpha", "--subject", "Ship", "--blocked-by", "1, 2")
		if out != "created task 3: Ship\n" {
			t.Errorf("task create printed %q", out)
		}
		h.json(&t3, "task", "get", "--team", "alpha", "3")
		if t1.ID != "1" || t2.ID != "2" || t3.ID != "3" {
			t.Fatalf("task ids = %s, %s, %s; want 1, 2, 3", t1.ID, t2.ID, t3.ID)
		}
		if got, want := compact(t, t1.Metadata), map[string]json.RawMessage{"priority": json.RawMessage("1"), "tags": json.RawMessage(`["go","parser"]`)}; !cmp.Equal(got, want) {
			t.Errorf("task 1 metadata = %s; want %s", got, want)
		}
		if !cmp.Equal(t3.BlockedBy, []string{"1", "2"}) || t3.Status != tasklist.StatusPending {
			t.Errorf("task 3 = %+v; want pending, blocked by 1, 2", t3)
		}
		h.json(&t1, "task", "get", "--team", "alpha", "1")
		if !cmp.Equal(t1.Blocks, []string{"2", "3"}) {
			t.Errorf("task 1 blocks %v; want [2 3] (edges written on both sides)", t1.Blocks)
		}

		out = h.ok("task", "list", "--team", "alpha")
		for _, want := range []string{"ID", "STATUS", "pending (ready)", "Write the parser", "Ship", "1,2"} {
			if !strings.Contains(out, want) {
				t.Errorf("task list output lacks %q:\n%s", want, out)
			}
		}
		var all []tasklist.Task
		h.json(&all, "task", "list", "--team", "alpha")
		if len(all) != 3 {
			t.Errorf("task list --json = %d tasks; want 3", len(all))
		}
		out = h.ok("task", "get", "--team", "alpha", "2")
		for _, want := range []string{"Test the parser", "Blocked by:", "1 (open: 1)", "table tests"} {
			if !strings.Contains(out, want) {
				t.Errorf("task get output lacks %q:\n%s", want, out)
			}
		}

		// Claiming the blocked task is refused; the first ready one is task 1.
		err := h.fail("task", "claim", "--team", "alpha", "--agent", "bob", "2")
		if !errors.Is(err, tasklist.ErrBlocked) || err.Error() != "task 2 is blocked by open task(s) 1" {
			t.Errorf("claim of blocked task 2: %q; want blocked by 1", err)
		}
		var claimed tasklist.Task
		h.json(&claimed, "task", "claim", "--team", "alpha", "--agent", "alice")
		if claimed.ID != "1" || claimed.Owner != "alice" || claimed.Status != tasklist.StatusInProgress {
			t.Errorf("claim = %+v; want task 1, in_progress, owned by alice", claimed)
		}
		err = h.fail("task", "claim", "--team", "alpha", "--agent", "bob", "1")
		if !errors.Is(err, tasklist.ErrClaimed) || err.Error() != "task 1 is already claimed by alice" {
			t.Errorf("claim of alice's task: %q; want already claimed by alice", err)
		}
		err = h.fail("task", "claim", "--team", "alpha", "--agent", "bob")
		if !errors.Is(err, tasklist.ErrNoneReady) {
			t.Errorf("claim with nothing ready: %v; want ErrNoneReady", err)
		}
		if err := h.fail("task", "update", "--team", "alpha", "3", "--status", "completed"); !errors.Is(err, tasklist.ErrBlocked) {
			t.Errorf("completing blocked task 3: %v; want ErrBlocked", err)
		}

		var res taskcmd.Updated
		h.json(&res, "task", "update", "--team", "alpha", "1", "--status", "completed", "--metadata", "priority=null", "--metadata", `done="yes"`)
		if res.Task.Status != tasklist.StatusCompleted || res.From != tasklist.StatusInProgress {
			t.Errorf("update = %+v; want completed, from in_progress", res)
		}
		if got, want := compact(t, res.Task.Metadata), map[string]json.RawMessage{"tags": json.RawMessage(`["go","parser"]`), "done": json.RawMessage(`"yes"`)}; !cmp.Equal(got, want) {
			t.Errorf("metadata after merge = %s; want %s", got, want)
		}
		err = h.fail("task", "claim", "--team", "alpha", "--agent", "bob", "1")
		if !errors.Is(err, tasklist.ErrCompleted) || err.Error() != "task 1 is already completed" {
			t.Errorf("claim of completed task: %q; want already completed", err)
		}
		out = h.ok("task", "claim", "--team", "alpha", "--agent", "bob", "2")
		if out != "bob claimed task 2: Test the parser\n" {
			t.Errorf("claim printed %q", out)
		}

		var released []tasklist.Task
		h.json(&released, "task", "release", "--team", "alpha", "--agent", "bob")
		if len(released) != 1 || released[0].ID != "2" || released[0].Owner != "" || released[0].Status != tasklist.StatusPending {
			t.Errorf("release = %+v; want task 2 back to pending, unowned", released)
		}
		if out := h.ok("task", "release", "--team", "alpha", "--agent", "bob"); !strings.Contains(out, "no unfinished tasks") {
			t.Errorf("second release printed %q", out)
		}

		out = h.ok("task", "update", "--team", "alpha", "2", "--subject", "Test it", "--owner", "alice", "--status", "in_progress")
		if want := "updated task 2: subject, owner, status pending -> in_progress\n"; out != want {
			t.Errorf("update printed %q; want %q", out, want)
		}
		if out := h.ok("task", "update", "--team", "alpha", "2", "--subject", "Test it"); out != "task 2: nothing changed\n" {
			t.Errorf("no-op update printed %q", out)
		}
		h.ok("task", "update", "--team", "alpha", "2", "--owner", "")
		h.json(&t2, "task", "get", "--team", "alpha", "2")
		if t2.Owner != "" {
			t.Errorf("after --owner \"\", owner = %q; want none", t2.Owner)
		}

		var t4 tasklist.Task
		h.json(&t4, "task", "create", "--team", "alpha", "--subject", "Docs", "--owner", "bob")
		h.ok("task", "update", "--team", "alpha", "4", "--add-blocked-by", "3")
		h.json(&t4, "task", "get", "--team", "alpha", "4")
		if t4.Owner != "bob" || !cmp.Equal(t4.BlockedBy, []string{"3"}) {
			t.Errorf("task 4 = %+v; want owner bob, blocked by 3", t4)
		}
		if err := h.fail("task", "update", "--team", "alpha", "3", "--add-blocked-by", "4"); !errors.Is(err, tasklist.ErrCycle) {
			t.Errorf("adding a cycle: %v; want ErrCycle", err)
		}

		h.json(&res, "task", "update", "--team", "alpha", "4", "--status", "deleted")
		if !res.Deleted {
			t.Errorf("update --status deleted = %+v; want deleted", res)
		}
		if err := h.fail("task", "get", "--team", "alpha", "4"); err.Error() != "no task 4 in team alpha" {
			t.Errorf("get of a deleted task: %q; want no task 4 in team alpha", err)
		}
	})
}

// compact returns m with its values in compact JSON, as a --json output
// re-indents them.
func compact(t *testing.T, m map[string]json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			t.Fatalf("metadata %s: %v", k, err)
		}
		out[k] = b.Bytes()
	}
	return out
}
