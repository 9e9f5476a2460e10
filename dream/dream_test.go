package dream_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/dream"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/memory"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/filetool"
)

type setup struct {
	reg                      *task.Registry
	memDir, sessions, escape string
}

func newSetup(t *testing.T) setup {
	t.Helper()
	root := t.TempDir()
	s := setup{memDir: filepath.Join(root, "memory"), sessions: filepath.Join(root, "sessions"), escape: filepath.Join(root, "escape.md")}
	if err := os.MkdirAll(filepath.Join(s.sessions, "s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.sessions, "s1", "lead.jsonl"), []byte(`{"text":"we use FACT-42"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.reg = task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.reg.Close(ctx)
	})
	return s
}

func (s setup) config(t *testing.T, script string) dream.Config {
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return dream.Config{Model: scripted.New(sc), MemoryDir: s.memDir, SessionsDir: s.sessions, Current: "now",
		Tools: func(dir string) (*tool.Registry, error) {
			return tool.NewRegistry(filetool.All(filetool.Config{Root: dir, Guard: memory.Guard(dir)})...)
		}}
}

// wait returns the dream's terminal state.
func wait(t *testing.T, sub *task.Subscription, id task.ID) task.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.State.ID == id && e.Kind == task.EventTerminated {
			if e.Notification != "" {
				t.Errorf("a dream notified the model: %s", e.Notification)
			}
			return e.State
		}
	}
}

func TestDream(t *testing.T) {
	s := newSetup(t)
	sub := s.reg.Subscribe()
	defer sub.Close()
	cfg := s.config(t, `{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [
	    {"name": "Write", "input": {"file_path": "MEMORY.md", "content": "- [facts](facts.md)\n"}},
	    {"name": "Write", "input": {"file_path": "facts.md", "content": "We use FACT-42.\n"}},
	    {"name": "Write", "input": {"file_path": "`+s.escape+`", "content": "escaped"}}]}},
	  {"match": {"turn": 1}, "reply": {"text": "Consolidated."}}
	]}`)
	before := time.Now().Add(-time.Second)
	id, err := dream.Start(s.reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(id), "d") {
		t.Errorf("dream id %s; want a d prefix", id)
	}
	// A second session cannot dream meanwhile.
	if _, err := dream.Start(s.reg, cfg); !errors.Is(err, dream.ErrBusy) {
		t.Errorf("a concurrent Start = %v; want ErrBusy", err)
	}
	st := wait(t, sub, id)
	if st.Status != task.Completed {
		t.Fatalf("dream ended %s: %s", st.Status, st.Description)
	}
	d, _ := task.DetailAs[*task.DreamDetail](st)
	if d == nil || d.SessionsReviewing != 1 || !slices.Equal(d.FilesTouched, []string{"MEMORY.md", "facts.md"}) {
		t.Errorf("detail = %+v", d)
	}
	if _, err := os.Stat(s.escape); !os.IsNotExist(err) {
		t.Errorf("the dream wrote outside its folder: %v", err)
	}
	got, _ := memory.Load(s.memDir, 0)
	if !strings.Contains(got, "We use FACT-42.") || strings.Index(got, "facts.md)") > strings.Index(got, "We use FACT-42") {
		t.Errorf("memory after the dream:\n%s", got)
	}
	last, _ := memory.Lock{Dir: s.memDir}.Last()
	if last.Before(before) {
		t.Errorf("the lock's time %v; want the dream's start", last)
	}
	// Nothing new since: no dream, and the recorded time stays.
	if _, err := dream.Start(s.reg, cfg); !errors.Is(err, dream.ErrNothing) {
		t.Errorf("Start with no new session = %v; want ErrNothing", err)
	}
	if again, _ := (memory.Lock{Dir: s.memDir}).Last(); !again.Equal(last) {
		t.Errorf("a refused Start moved the lock's time from %v to %v", last, again)
	}
}

// A failed dream rolls the lock back: it is due again.
func TestDreamFailureRollsBack(t *testing.T) {
	s := newSetup(t)
	sub := s.reg.Subscribe()
	defer sub.Close()
	prior := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	if err := os.MkdirAll(s.memDir, 0o755); err != nil {
		t.Fatal(err)
	}
	lockFile := filepath.Join(s.memDir, memory.LockName)
	if err := os.WriteFile(lockFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(lockFile, prior, prior); err != nil {
		t.Fatal(err)
	}
	id, err := dream.Start(s.reg, s.config(t, `{"turns": [{"reply": {"error": "overloaded"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if st := wait(t, sub, id); st.Status != task.Failed {
		t.Errorf("status %s; want failed", st.Status)
	}
	if last, _ := (memory.Lock{Dir: s.memDir}).Last(); !last.Equal(prior) {
		t.Errorf("after a failed dream the lock's time is %v; want the previous %v", last, prior)
	}
	// Stopped: the same.
	id, err = dream.Start(s.reg, s.config(t, `{"turns": [{"reply": {"text": "slow", "delay_ms": 60000}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.reg.Stop(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if last, _ := (memory.Lock{Dir: s.memDir}).Last(); !last.Equal(prior) {
		t.Errorf("after a stopped dream the lock's time is %v; want the previous %v", last, prior)
	}
}

func TestApprover(t *testing.T) {
	a := dream.Approver{MemoryDir: "/h/projects/p/memory", SessionsDir: "/h/sessions", Sessions: []string{"s1"}}
	tests := []struct {
		tool, input string
		want        bool
	}{
		{"Read", `{"file_path": "/h/sessions/s1/lead.jsonl"}`, true},
		{"Read", `{"file_path": "MEMORY.md"}`, true},
		{"Read", `{"file_path": "/etc/passwd"}`, false},
		{"Read", `{"file_path": "/h/sessions/s1.jsonl"}`, true},
		{"Read", `{"file_path": "/h/sessions/s2/lead.jsonl"}`, false},
		{"Read", `{"file_path": "/h/sessions/s2.jsonl"}`, false},
		{"Read", `{"file_path": "/h/sessions/s1/../s2/lead.jsonl"}`, false},
		{"Grep", `{"pattern": "x", "path": "/h/sessions/s1"}`, true},
		{"Grep", `{"pattern": "x", "path": "/h/sessions"}`, false},
		{"Glob", `{"pattern": "*", "path": "/h/sessions"}`, false},
		{"Glob", `{"pattern": "/h/sessions/*/lead.jsonl"}`, false},
		{"Glob", `{"pattern": "../../../sessions/*/lead.jsonl"}`, false},
		{"Glob", `{"pattern": "**/*.jsonl", "path": "/h/sessions/s1"}`, true},
		{"Glob", `{"pattern": "*.md"}`, true},
		{"Write", `{"file_path": "/h/projects/p/memory/a.md"}`, true},
		{"Write", `{"file_path": "/h/sessions/s1/lead.jsonl"}`, false},
		{"Edit", `{"file_path": "../../escape.md"}`, false},
		{"Bash", `{"command": "rm -rf /"}`, false},
	}
	for _, tt := range tests {
		v, _ := a.Approve(context.Background(), agent.Request{Tool: tt.tool, Input: []byte(tt.input)})
		if v.Allow != tt.want {
			t.Errorf("Approve(%s %s) = %+v; want allow %v", tt.tool, tt.input, v, tt.want)
		}
	}
}
