package teamtool_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

type taskGetOut struct {
	Task struct {
		ID          string                     `json:"id"`
		Subject     string                     `json:"subject"`
		Description string                     `json:"description"`
		ActiveForm  string                     `json:"activeForm"`
		Status      string                     `json:"status"`
		Owner       string                     `json:"owner"`
		Blocks      []string                   `json:"blocks"`
		BlockedBy   []string                   `json:"blockedBy"`
		Metadata    map[string]json.RawMessage `json:"metadata"`
	} `json:"task"`
}

type taskUpdateOut struct {
	Success       bool     `json:"success"`
	TaskID        string   `json:"taskId"`
	UpdatedFields []string `json:"updatedFields"`
	StatusChange  *struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"statusChange"`
	Warning string `json:"warning"`
}

func TestTaskTools(t *testing.T) {
	eachStore(t, func(t *testing.T, s stores) {
		c := newTeam(t, s)
		lead := agentTools(s, member(t, c, team.LeadName), nil)

		var created struct {
			Task struct{ ID, Subject string } `json:"task"`
		}
		lead.ok(t, "TaskCreate", `{"subject": "Write the parser", "description": "In ./parse", "activeForm": "Writing the parser", "metadata": {"area": "parse", "gone": null}}`, &created)
		if created.Task.ID != "1" || created.Task.Subject != "Write the parser" {
			t.Errorf("TaskCreate = %+v; want task 1", created)
		}
		lead.ok(t, "TaskCreate", `{"subject": "Test the parser", "description": ""}`, nil)

		var up taskUpdateOut
		lead.ok(t, "TaskUpdate", `{"taskId": "2", "addBlockedBy": ["#1"]}`, &up)
		if diff := cmp.Diff([]string{"blocks"}, up.UpdatedFields); diff != "" || !up.Success || up.TaskID != "2" {
			t.Errorf("TaskUpdate addBlockedBy = %+v (-want +got fields):\n%s", up, diff)
		}

		var list struct {
			Tasks []struct {
				ID, Subject, Status, Owner string
				BlockedBy                  []string `json:"blockedBy"`
			} `json:"tasks"`
		}
		lead.ok(t, "TaskList", `{}`, &list)
		if len(list.Tasks) != 2 || list.Tasks[0].ID != "1" || len(list.Tasks[0].BlockedBy) != 0 || fmt.Sprint(list.Tasks[1].BlockedBy) != "[1]" {
			t.Errorf("TaskList = %+v; want 1 ready, 2 blocked by 1", list)
		}

		var got taskGetOut
		lead.ok(t, "TaskGet", `{"taskId": "1"}`, &got)
		if got.Task.Description != "In ./parse" || got.Task.ActiveForm != "Writing the parser" || got.Task.Status != "pending" ||
			fmt.Sprint(got.Task.Blocks) != "[2]" || string(got.Task.Metadata["area"]) != `"parse"` || got.Task.Metadata["gone"] != nil {
			t.Errorf("TaskGet 1 = %+v", got)
		}

		// Completing 2 while 1 is open is refused, naming the blocker.
		lead.fails(t, "TaskUpdate", `{"taskId": "2", "status": "completed"}`, "task #2 is blocked by open task(s) #1")
		// A cycle is refused with its path.
		lead.fails(t, "TaskUpdate", `{"taskId": "1", "addBlockedBy": ["2"]}`, "would close a cycle", "->")

		// Metadata merge: a key set, a key deleted by null.
		lead.ok(t, "TaskUpdate", `{"taskId": "1", "metadata": {"area": null, "size": 3}, "status": "completed"}`, &up)
		if up.StatusChange == nil || up.StatusChange.From != "pending" || up.StatusChange.To != "completed" {
			t.Errorf("statusChange = %+v; want pending -> completed", up.StatusChange)
		}
		lead.ok(t, "TaskGet", `{"taskId": "1"}`, &got)
		if diff := cmp.Diff(map[string]json.RawMessage{"size": json.RawMessage("3")}, got.Task.Metadata); diff != "" {
			t.Errorf("metadata after merge (-want +got):\n%s", diff)
		}
		lead.ok(t, "TaskUpdate", `{"taskId": "2", "status": "completed"}`, nil)

		lead.ok(t, "TaskUpdate", `{"taskId": "1", "status": "deleted"}`, &up)
		if diff := cmp.Diff([]string{"deleted"}, up.UpdatedFields); diff != "" {
			t.Errorf("delete fields (-want +got):\n%s", diff)
		}
		lead.fails(t, "TaskGet", `{"taskId": "1"}`, "not found", "TaskList")
		lead.ok(t, "TaskGet", `{"taskId": "2"}`, &got)
		if len(got.Task.BlockedBy) != 0 {
			t.Errorf("task 2 still blocked by the deleted task: %v", got.Task.BlockedBy)
		}
	})
}

func TestTaskToolErrors(t *testing.T) {
	eachStore(t, func(t *testing.T, s stores) {
		c := newTeam(t, s)
		lead := agentTools(s, member(t, c, team.LeadName), nil)
		lead.ok(t, "TaskCreate", `{"subject": "one", "description": "d"}`, nil)
		tests := []struct {
			tool, input string
			want        []string
		}{
			{"TaskCreate", `{"description": "d"}`, []string{"subject is required"}},
			{"TaskCreate", `{"subject": "s"}`, []string{"description is required"}},
			{"TaskCreate", `{"subject": "s", "description": "d", "metadata": [1]}`, []string{"metadata must be a JSON object"}},
			{"TaskCreate", `{"subject": "s", "description": "d", "owner": "bob"}`, []string{`unknown field "owner"`}},
			{"TaskGet", `{}`, []string{"taskId is required"}},
			{"TaskGet", `{"taskId": "abc"}`, []string{`"abc" is not a task id`}},
			{"TaskGet", `{"taskId": "9"}`, []string{"not found"}},
			{"TaskList", `{"all": true}`, []string{`unknown field "all"`}},
			{"TaskUpdate", `{"taskId": "1"}`, []string{"nothing to update"}},
			{"TaskUpdate", `{"taskId": "1", "status": "done"}`, []string{`status "done" is not one of`}},
			{"TaskUpdate", `{"taskId": "1", "status": "deleted", "subject": "x"}`, []string{"do not combine"}},
			{"TaskUpdate", `{"taskId": "1", "subject": " "}`, []string{"subject may not be empty"}},
			{"TaskUpdate", `{"taskId": "1", "addBlocks": ["1"]}`, []string{"names task #1 itself"}},
			{"TaskUpdate", `{"taskId": "1", "addBlocks": ["7"]}`, []string{"7"}},
			{"TaskUpdate", `{"taskId": "9", "status": "completed"}`, []string{"not found"}},
			{"TaskUpdate", `{"taskId": "9", "status": "deleted"}`, []string{"not found"}},
			{"TaskUpdate", `{"taskId": "1", "owner": "carol"}`, []string{`owner "carol" is not a member`, "alice, bob, team-lead"}},
		}
		for _, tt := range tests {
			t.Run(tt.tool+" "+tt.input, func(t *testing.T) { lead.fails(t, tt.tool, tt.input, tt.want...) })
		}
		for _, name := range []string{"TaskCreate", "TaskGet", "TaskList", "TaskUpdate"} {
			in := map[string]string{"TaskCreate": `{"subject": "s", "description": "d"}`, "TaskGet": `{"taskId": "1"}`, "TaskList": `{}`, "TaskUpdate": `{"taskId": "1", "status": "completed"}`}[name]
			agentTools(s, teamtool.Self{Name: "loner"}, nil).fails(t, name, in, "not in a team")
		}
	})
}

func TestTaskAssignment(t *testing.T) {
	eachStore(t, func(t *testing.T, s stores) {
		c := newTeam(t, s)
		lead := agentTools(s, member(t, c, team.LeadName), nil)
		lead.ok(t, "TaskCreate", `{"subject": "Review parse.go", "description": "Look for panics"}`, nil)
		var up taskUpdateOut
		lead.ok(t, "TaskUpdate", `{"taskId": "1", "owner": "alice"}`, &up)
		if diff := cmp.Diff([]string{"owner"}, up.UpdatedFields); diff != "" || up.Warning != "" {
			t.Errorf("fields (-want +got):\n%s; warning %q", diff, up.Warning)
		}
		msg, f := onlyFrame(t, s, "alice")
		want := mailbox.TaskAssignment{TaskID: "1", Subject: "Review parse.go", Description: "Look for panics", AssignedBy: team.LeadName, Timestamp: "2026-12-02T13:13:36.880Z"}
		if diff := cmp.Diff(mailbox.Frame(want), f); diff != "" || msg.From != team.LeadName {
			t.Errorf("alice's frame (-want +got):\n%s (from %q)", diff, msg.From)
		}
		// The same owner again changes nothing and sends nothing.
		lead.ok(t, "TaskUpdate", `{"taskId": "1", "owner": "alice"}`, nil)
		if n := len(inbox(t, s, "alice")); n != 1 {
			t.Errorf("alice has %d messages after a no-op reassignment; want 1", n)
		}
		// Clearing the owner tells nobody.
		lead.ok(t, "TaskUpdate", `{"taskId": "1", "owner": ""}`, nil)
		if n := len(inbox(t, s, "alice")) + len(inbox(t, s, "bob")); n != 1 {
			t.Errorf("%d messages after clearing the owner; want 1", n)
		}
	})
}

func TestTaskClaim(t *testing.T) {
	eachStore(t, func(t *testing.T, s stores) {
		c := newTeam(t, s)
		lead := agentTools(s, member(t, c, team.LeadName), nil)
		alice := agentTools(s, member(t, c, "alice"), nil)
		bob := agentTools(s, member(t, c, "bob"), nil)
		lead.ok(t, "TaskCreate", `{"subject": "first", "description": "d"}`, nil)
		lead.ok(t, "TaskCreate", `{"subject": "second", "description": "d"}`, nil)
		lead.ok(t, "TaskUpdate", `{"taskId": "2", "addBlockedBy": ["1"]}`, nil)

		var up taskUpdateOut
		alice.ok(t, "TaskUpdate", `{"taskId": "1", "owner": "alice", "status": "in_progress", "activeForm": "Doing the first"}`, &up)
		if diff := cmp.Diff([]string{"owner", "status", "activeForm"}, up.UpdatedFields); diff != "" || up.StatusChange == nil || up.StatusChange.To != "in_progress" {
			t.Errorf("claim = %+v (-want +got fields):\n%s", up, diff)
		}
		bob.fails(t, "TaskUpdate", `{"taskId": "1", "owner": "bob", "status": "in_progress"}`, "task #1 is already claimed by alice")
		bob.fails(t, "TaskUpdate", `{"taskId": "2", "owner": "bob", "status": "in_progress"}`, "task #2 is blocked by open task(s) #1")
		alice.ok(t, "TaskUpdate", `{"taskId": "1", "status": "completed"}`, nil)
		bob.fails(t, "TaskUpdate", `{"taskId": "1", "owner": "bob", "status": "in_progress"}`, "task #1 is already completed")
		bob.ok(t, "TaskUpdate", `{"taskId": "2", "owner": "bob", "status": "in_progress"}`, nil)
		// Claiming one's own task again succeeds and changes nothing.
		bob.ok(t, "TaskUpdate", `{"taskId": "2", "owner": "bob", "status": "in_progress"}`, &up)
		if len(up.UpdatedFields) != 0 || up.StatusChange != nil {
			t.Errorf("re-claim = %+v; want no change", up)
		}
		// A claim sends no task_assignment: the claimant knows.
		for _, n := range []string{"alice", "bob"} {
			if got := inbox(t, s, n); len(got) != 0 {
				t.Errorf("%s got %+v after claims", n, got)
			}
		}
	})
}

// TestTaskClaimRace has 16 agents take the same task at once: exactly one
// wins, the others are told who has it.
func TestTaskClaimRace(t *testing.T) {
	eachStore(t, func(t *testing.T, s stores) {
		c := newTeam(t, s)
		agentTools(s, member(t, c, team.LeadName), nil).ok(t, "TaskCreate", `{"subject": "contended", "description": "d"}`, nil)
		const n = 16
		results := make([]string, n)
		errs := make([]bool, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			name := fmt.Sprintf("w%d", i)
			ts := agentTools(s, teamtool.Self{Team: c.Name, Name: name}, nil)
			wg.Go(func() {
				<-start
				res := ts.call(t, "TaskUpdate", fmt.Sprintf(`{"taskId": "1", "owner": %q, "status": "in_progress"}`, name))
				results[i], errs[i] = res.Content, res.IsError
			})
		}
		close(start)
		wg.Wait()
		winner := ""
		for i := range n {
			if !errs[i] {
				if winner != "" {
					t.Fatalf("both %s and w%d claimed task 1", winner, i)
				}
				winner = fmt.Sprintf("w%d", i)
			}
		}
		if winner == "" {
			t.Fatalf("nobody claimed task 1: %q", results)
		}
		for i := range n {
			if errs[i] && !strings.Contains(results[i], "already claimed by "+winner) {
				t.Errorf("loser w%d got %q; want already claimed by %s", i, results[i], winner)
			}
		}
		task, err := tasklist.New(s.Tasks, c.Name).Get(t.Context(), "1")
		if err != nil || task.Owner != winner || task.Status != tasklist.StatusInProgress {
			t.Errorf("task 1 = %+v, %v; want in_progress owned by %s", task, err, winner)
		}
	})
}

// TestTaskListCorrupt: a task file that does not decode is reported
// beside the readable tasks, not instead of them.
func TestTaskListCorrupt(t *testing.T) {
	root := t.TempDir()
	fs, err := file.Open(root, file.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	s := stores{fs.Teams(), fs.Mail(), fs.Tasks()}
	c := newTeam(t, s)
	lead := agentTools(s, member(t, c, team.LeadName), nil)
	lead.ok(t, "TaskCreate", `{"subject": "good", "description": "d"}`, nil)
	if err := os.WriteFile(filepath.Join(root, "tasks", c.Name, "2.json"), []byte(`{"id": "2", "status": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Tasks   []struct{ ID string } `json:"tasks"`
		Warning string                `json:"warning"`
	}
	lead.ok(t, "TaskList", `{}`, &out)
	if len(out.Tasks) != 1 || out.Tasks[0].ID != "1" || !strings.Contains(out.Warning, "could not be read") {
		t.Errorf("TaskList = %+v; want task 1 and a warning about the corrupt one", out)
	}
}
