package kit

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// A background sub-agent is a ListAgents row; once completed, a
// SendMessage to its bare name resumes it from its conversation.
func TestAddressableResumesCompletedSubAgent(t *testing.T) {
	dir := t.TempDir()
	s, err := scripted.Parse([]byte(`{"turns":[
 {"match":{"user":"FIRST-JOB"},"reply":{"text":"first done"}},
 {"match":{"user":"SECOND-JOB"},"reply":{"text":"second done, remembering the first"}}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := task.New(task.Config{Dir: filepath.Join(dir, "tasks"), PollInterval: -1})
	t.Cleanup(func() { reg.Close(context.Background()) })
	ap := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: dir, Mode: permission.ModeBypass}
	core, sub := Tools(ToolOptions{Cwd: dir, Registry: reg, Model: scripted.New(s), Approver: ap})
	tools := Addressable(append(core, sub), Addressing{})
	byName := map[string]tool.Tool{}
	for _, tl := range tools {
		byName[tl.Spec().Name] = tl
	}
	call := func(name, input string) tool.Result {
		t.Helper()
		res, err := byName[name].Run(t.Context(), tool.Call{ID: "c-" + name, Name: name, Input: json.RawMessage(input)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s(%s): %s", name, input, res.Content)
		}
		return res
	}
	call("Agent", `{"description":"scout it","prompt":"FIRST-JOB","name":"scout","run_in_background":true}`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := call("ListAgents", `{}`)
		if strings.Contains(res.Content, "scout [") && strings.Contains(res.Content, " subagent completed ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ListAgents never showed scout completed:\n%s", res.Content)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res := call("SendMessage", `{"to":"scout","message":"SECOND-JOB"}`)
	if !strings.Contains(strings.ToLower(res.Content), "resum") {
		t.Fatalf("SendMessage to the completed scout: %s; want it resumed", res.Content)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		var found bool
		for _, st := range reg.List() {
			if a, ok := st.Detail.(*task.Agent); ok && strings.Contains(a.Result, "second done") {
				found = true
			}
		}
		if found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the resumed scout never ran the second job")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
