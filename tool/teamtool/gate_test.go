package teamtool_test

import (
	"context"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

// The task gate (the TaskCreated and TaskCompleted hooks): a refused
// creation leaves no task, a refused completion leaves the task as it
// was, and the model reads the reason.
func TestTaskGate(t *testing.T) {
	eachStore(t, func(t *testing.T, s stores) {
		c := newTeam(t, s)
		var mu sync.Mutex
		var seen []string
		refuse := map[string]bool{teamtool.GateTaskCreated: false, teamtool.GateTaskCompleted: true}
		gate := func(_ context.Context, g string, self teamtool.Self, tk tasklist.Task) (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, g+" "+tk.ID+" "+tk.Subject+" by "+self.Name)
			if tk.Subject == "forbidden" {
				return true, "no such tasks here"
			}
			return refuse[g], "tests fail"
		}
		alice := agentTools(s, member(t, c, "alice"), func(cfg *teamtool.Config) { cfg.Hooks.TaskGate = gate })
		alice.fails(t, "TaskCreate", `{"subject":"forbidden","description":"x"}`, `a TaskCreated hook refused task "forbidden": no such tasks here`)
		alice.ok(t, "TaskCreate", `{"subject":"parser","description":"x"}`, nil)
		tasks, err := tasklist.New(s.Tasks, teamName).Tasks(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) != 1 || tasks[0].Subject != "parser" {
			t.Fatalf("tasks = %+v; want only parser (the refused one deleted)", tasks)
		}
		id := tasks[0].ID
		alice.ok(t, "TaskUpdate", `{"taskId":"`+id+`","status":"in_progress","owner":"alice"}`, nil)
		alice.fails(t, "TaskUpdate", `{"taskId":"`+id+`","status":"completed"}`, "a TaskCompleted hook refused to complete task "+id+": tests fail")
		tk, err := tasklist.New(s.Tasks, teamName).Get(t.Context(), id)
		if err != nil || tk.Status != tasklist.StatusInProgress {
			t.Fatalf("after a refused completion the task is %+v, %v; want in_progress", tk, err)
		}
		mu.Lock()
		refuse[teamtool.GateTaskCompleted] = false
		mu.Unlock()
		alice.ok(t, "TaskUpdate", `{"taskId":"`+id+`","status":"completed"}`, nil)
		alice.ok(t, "TaskUpdate", `{"taskId":"`+id+`","status":"completed"}`, nil) // already completed: no gate
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 4 || seen[0] != "TaskCreated 1 forbidden by alice" || seen[3] != "TaskCompleted "+id+" parser by alice" {
			t.Errorf("gate calls %q; want created twice, completed twice", seen)
		}
	})
}
