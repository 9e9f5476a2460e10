package workflow

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

func TestToolStartsAndResumes(t *testing.T) {
	reg := newReg(t)
	sub := reg.Subscribe()
	older, root, named := t.TempDir(), t.TempDir(), t.TempDir()
	src := head + "const a = await agent('one'); return a + '/' + args.n"
	os.WriteFile(filepath.Join(named, "w.js"), []byte(src), 0o644)
	first := &echo{}
	j, err := Prepare(Launch{Script: mustParse(t, src), Args: json.RawMessage(`{"n":1}`), Root: older, Runner: first})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	rn := &echo{}
	wt := NewTool(ToolConfig{Registry: reg, Root: root, Dirs: []string{named}, Runner: rn, Roots: func() []string { return []string{older} }})
	call := func(in string) tool.Result {
		res, err := wt.Run(t.Context(), tool.Call{ID: "toolu_1", Name: "Workflow", Input: json.RawMessage(in)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, bad := range []string{`{}`, `{"script": "x", "name": "w"}`, `{"name": "nope"}`, `{"script": "return 1"}`, `{"name": "w", "resumeFromRunId": "wf_000000000000"}`} {
		if res := call(bad); !res.IsError {
			t.Errorf("Workflow(%s) = %q; want an error result", bad, res.Content)
		}
	}
	res := call(`{"name": "w", "args": {"n": 2}, "resumeFromRunId": "` + j.ID + `"}`)
	if res.IsError {
		t.Fatalf("Workflow = %s", res.Content)
	}
	id := regexp.MustCompile(`task id: (w[0-9a-z]{8})`).FindStringSubmatch(res.Content)
	if id == nil || !strings.Contains(res.Content, "run id: wf_") || !strings.Contains(res.Content, root) {
		t.Fatalf("Workflow = %s", res.Content)
	}
	e := waitEvent(t, sub, func(e task.Event) bool { return e.Kind == task.EventTerminated && string(e.State.ID) == id[1] })
	if e.State.Status != task.Completed || rn.runs.Load() != 0 || !strings.Contains(e.Notification, `done: one/2`) {
		t.Errorf("status %s, %d runs, notification %s; want completed from the cache", e.State.Status, rn.runs.Load(), e.Notification)
	}
}
