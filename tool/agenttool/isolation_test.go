package agenttool_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coreagent "github.com/troupe-dev/troupe/agent"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/worktree"
)

// gitTrees is an Isolation over a real repository.
type gitTrees struct{ m *worktree.Manager }

func (g gitTrees) Isolate(ctx context.Context, name string) (agenttool.Workspace, error) {
	t, err := g.m.Create(ctx, "agents", name)
	if err != nil {
		return agenttool.Workspace{}, err
	}
	return agenttool.Workspace{Dir: t.Path, End: func(ctx context.Context) (string, bool) {
		res, err := g.m.Finish(ctx, t)
		if err != nil {
			return err.Error(), false
		}
		return res.Report(), res.Removed
	}}, nil
}

func gitRepo(t *testing.T) *worktree.Manager {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed; CI must have it")
		}
		t.Skip("git is not installed")
	}
	dir := filepath.Join(t.TempDir(), "repo")
	for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	m, err := worktree.Open(t.Context(), dir, worktree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A background sub-agent in a worktree that changes nothing: its worktree
// goes when it ends, the notification says so, and it cannot be resumed.
func TestBackgroundWorktree(t *testing.T) {
	m := gitRepo(t)
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	var dir string
	parent, _ := tool.NewRegistry(named("Echo"))
	tl := agenttool.New(agenttool.Config{Tools: parent, Registry: reg, Worktrees: gitTrees{m},
		Factory: func(_ context.Context, s agenttool.Spec) (coreagent.Config, error) {
			dir = s.Dir
			return coreagent.Config{Model: model(t, `{"turns": [{"reply": {"text": "LOOKED"}}]}`), Tools: s.Tools, CompactAt: -1}, nil
		}})
	res := run(t, tl, `{"description": "look", "prompt": "look", "run_in_background": true, "name": "looker", "isolation": "worktree"}`)
	if res.IsError || dir != filepath.Join(m.Root(), "agents", "looker") {
		t.Fatalf("Agent = %+v, dir %q", res, dir)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == taskreg.EventTerminated {
			if !strings.Contains(e.Notification, "LOOKED") || !strings.Contains(e.Notification, "had no changes: removed with its branch troupe/agents/looker") {
				t.Errorf("notification = %q", e.Notification)
			}
			break
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	sm := agenttool.NewSendMessage(tl)
	r, err := sm.Run(t.Context(), tool.Call{Name: "SendMessage", Input: []byte(`{"to": "looker", "message": "again", "summary": "again"}`)})
	if err != nil || !r.IsError || !strings.Contains(r.Content, "cannot be resumed") {
		t.Errorf("resume = %+v, %v; want a refusal", r, err)
	}
	// The same name again is a fresh worktree.
	res = run(t, tl, `{"description": "look", "prompt": "look", "name": "looker", "isolation": "worktree"}`)
	if res.IsError || !strings.Contains(res.Content, "removed with its branch") {
		t.Errorf("foreground Agent = %+v", res)
	}
}

func TestWorktreeUnavailable(t *testing.T) {
	tl := agenttool.New(agenttool.Config{Factory: func(context.Context, agenttool.Spec) (coreagent.Config, error) {
		t.Error("the factory ran")
		return coreagent.Config{}, nil
	}})
	if res := run(t, tl, `{"description": "d", "prompt": "p", "isolation": "worktree"}`); !res.IsError || !strings.Contains(res.Content, "not available") {
		t.Errorf("Agent = %+v", res)
	}
}
