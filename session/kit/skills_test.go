package kit

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// A skill's allowed-tools narrow the rest of the turn that loaded it:
// Bash outside its entries is refused with the skill named, Read (listed)
// runs; the next run is free again. A real agent, real tools, a scripted
// model.
func TestSkillNarrowsItsTurn(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, ".claude", "skills", "review")
	os.MkdirAll(skill, 0o755)
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: review\ndescription: review a change\nallowed-tools: Read Bash(git status:*)\n---\nReview the change.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("CONTENT-A\n"), 0o644)

	s, err := scripted.Parse([]byte(`{"turns": [
	  {"match": {"user": "USE-SKILL"}, "reply": {"tool_calls": [{"name": "Skill", "input": {"skill": "review"}}]}},
	  {"match": {"tool_result": "Skill"}, "reply": {"tool_calls": [
	    {"name": "Bash", "input": {"command": "echo NARROWED"}},
	    {"name": "Read", "input": {"file_path": "a.txt"}}]}},
	  {"match": {"user": "not among the tools"}, "reply": {"text": "done one"}},
	  {"match": {"user": "AFTER"}, "reply": {"tool_calls": [{"name": "Bash", "input": {"command": "echo FREE"}}]}},
	  {"match": {"user": "FREE"}, "reply": {"text": "done two"}}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := task.New(task.Config{Dir: t.TempDir()})
	t.Cleanup(func() { reg.Close(t.Context()) })
	ac := Run{UserHome: t.TempDir(), TroupeHome: t.TempDir()}.NewContext(dir, "m", false, nil)
	ts, sub := Tools(ToolOptions{Cwd: dir, Registry: reg, Context: ac})
	tools, err := tool.NewRegistry(append(ts, sub)...)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	results := map[string]string{} // tool name -> its last result
	cfg, err := ac.NarrowBySkills(agent.Config{Model: scripted.New(s), Tools: tools, Approver: agent.AllowAll{},
		OnEvent: func(e agent.Event) {
			if e.Type == agent.EventToolResult && e.Call != nil && e.ToolResult != nil {
				mu.Lock()
				results[e.Call.Name] = e.ToolResult.Text
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Kill()
	if res, err := ag.Run(t.Context(), "USE-SKILL"); err != nil || res.Text != "done one" {
		t.Fatalf("first run = %q, %v", res.Text, err)
	}
	mu.Lock()
	bash, read := results["Bash"], results["Read"]
	mu.Unlock()
	if !strings.Contains(bash, `Bash is not among the tools the skill "review" allows (Read, Bash(git status:*))`) || strings.Contains(bash, "NARROWED") {
		t.Errorf("Bash during the skill = %q; want it refused naming the skill and its tools", bash)
	}
	if !strings.Contains(read, "CONTENT-A") {
		t.Errorf("Read during the skill = %q; want the file", read)
	}
	if res, err := ag.Run(t.Context(), "AFTER"); err != nil || res.Text != "done two" {
		t.Fatalf("second run = %q, %v", res.Text, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(results["Bash"], "FREE") {
		t.Errorf("Bash in the next run = %q; want it run (the skill's turn is over)", results["Bash"])
	}
}

// Without a skill that has allowed-tools the configuration is untouched:
// no wrapper on the hot path.
func TestNoSkillScopeWithoutAllowedTools(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, ".claude", "skills", "notes")
	os.MkdirAll(skill, 0o755)
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: notes\ndescription: take notes\n---\nNotes.\n"), 0o644)
	reg := task.New(task.Config{Dir: t.TempDir()})
	t.Cleanup(func() { reg.Close(t.Context()) })
	ac := Run{UserHome: t.TempDir(), TroupeHome: t.TempDir()}.NewContext(dir, "m", false, nil)
	ts, _ := Tools(ToolOptions{Cwd: dir, Registry: reg, Context: ac})
	tools, _ := tool.NewRegistry(ts...)
	if _, ok := tools.Get("Skill"); !ok {
		t.Fatal("no Skill tool")
	}
	cfg, err := ac.NarrowBySkills(agent.Config{Tools: tools, Approver: agent.AllowAll{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, wrapped := cfg.Approver.(skillApprover); wrapped || cfg.Hooks != nil {
		t.Errorf("approver %T, hooks %v; want them untouched", cfg.Approver, cfg.Hooks)
	}
}
