package agenttool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	coreagent "github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
)

// counted is a test tool that counts its runs.
type counted struct {
	name string
	runs atomic.Int32
}

func (c *counted) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: c.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (*counted) ReadOnly(json.RawMessage) bool { return false }
func (c *counted) Run(context.Context, tool.Call) (tool.Result, error) {
	c.runs.Add(1)
	return tool.Result{Content: c.name + " ran"}, nil
}

// definitions are the types of these tests: the built-ins and three
// custom ones loaded from real files.
func definitions(t *testing.T) []agenttool.Definition {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"reviewer.md": "---\nname: reviewer\ndescription: reviews\ntools: Read, Grep\nmodel: haiku\n---\nYou are REVIEWER.\n",
		"fixer.md":    "---\nname: fixer\ndescription: fixes\ndisallowedTools: [Bash]\n---\nYou are FIXER.\n",
		"lead.md":     "---\nname: planner\ndescription: plans\npermissionMode: plan\nmodel: claude-opus-4-1\ncolor: purple\n---\nYou plan.\n",
	}
	for name, src := range files {
		if err := writeFile(dir, name, src); err != nil {
			t.Fatal(err)
		}
	}
	custom, err := brief.LoadAgents([]brief.AgentDir{{Path: dir, Source: brief.SourceProject}})
	if err != nil {
		t.Fatal(err)
	}
	var out []agenttool.Definition
	for _, a := range brief.WithBuiltins(custom) {
		out = append(out, agenttool.Definition{Name: a.Name, Description: a.Description, Tools: a.Tools, DisallowedTools: a.DisallowedTools, Color: a.Color,
			Model: a.Model, PermissionMode: a.PermissionMode, Builtin: a.Builtin(), Prompt: a.Prompt, Role: a.Role})
	}
	return out
}

func TestDefinitionsToolsEnforced(t *testing.T) {
	tools := map[string]*counted{}
	var all []tool.Tool
	for _, n := range []string{"Read", "Grep", "Glob", "Write", "Edit", "Bash", "TaskOutput", "TaskStop", "Agent", "TeamCreate", "mcp__srv__q"} {
		tools[n] = &counted{name: n}
		all = append(all, tools[n])
	}
	parent, err := tool.NewRegistry(all...)
	if err != nil {
		t.Fatal(err)
	}
	// Every sub-agent tries Write first, then Read.
	m := model(t, `{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"name": "Write", "input": {}}, {"name": "Read", "input": {}}]}, "repeat": true},
	  {"match": {"turn": 1}, "reply": {"text": "done"}, "repeat": true}
	]}`)
	var got agenttool.Spec
	tl := agenttool.New(agenttool.Config{Tools: parent, Agents: definitions(t),
		Factory: func(_ context.Context, s agenttool.Spec) (coreagent.Config, error) {
			got = s
			return coreagent.Config{Model: m, System: s.Agent.Prompt, Tools: s.Tools, CompactAt: -1}, nil
		}})

	tests := []struct {
		typ       string
		wantTools []string
		wantModel string
		wantWrite int32
	}{
		{"general-purpose", []string{"Bash", "Edit", "Glob", "Grep", "Read", "TaskOutput", "TaskStop", "Write", "mcp__srv__q"}, "", 1},
		{"Explore", []string{"Glob", "Grep", "Read"}, "", 0},
		{"Plan", []string{"Glob", "Grep", "Read"}, "", 0},
		{"reviewer", []string{"Grep", "Read"}, "haiku", 0},
		// Custom agents never get the task tools (the seed's deny list).
		{"fixer", []string{"Edit", "Glob", "Grep", "Read", "Write", "mcp__srv__q"}, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			before := tools["Write"].runs.Load()
			res := run(t, tl, `{"description": "d", "prompt": "p", "subagent_type": "`+tt.typ+`"}`)
			if res.IsError {
				t.Fatalf("Agent = %+v", res)
			}
			names := got.Tools.Names()
			slices.Sort(names)
			if !slices.Equal(names, tt.wantTools) {
				t.Errorf("%s tools = %v; want %v", tt.typ, names, tt.wantTools)
			}
			if got.Model != tt.wantModel || got.Agent.Name != tt.typ {
				t.Errorf("spec model %q, agent %q; want %q, %q", got.Model, got.Agent.Name, tt.wantModel, tt.typ)
			}
			if n := tools["Write"].runs.Load() - before; n != tt.wantWrite {
				t.Errorf("Write ran %d times; want %d (a tool outside the definition must not run)", n, tt.wantWrite)
			}
		})
	}
	for _, d := range definitions(t) {
		if d.Name == "reviewer" && d.Prompt != "You are REVIEWER." {
			t.Errorf("reviewer prompt %q", d.Prompt)
		}
	}
}

func TestUnknownTypeListsKnown(t *testing.T) {
	tl := agenttool.New(agenttool.Config{Agents: definitions(t),
		Factory: func(context.Context, agenttool.Spec) (coreagent.Config, error) {
			t.Error("the factory ran for an unknown type")
			return coreagent.Config{}, nil
		}})
	res := run(t, tl, `{"description": "d", "prompt": "p", "subagent_type": "nosuch"}`)
	want := `subagent_type "nosuch" is unknown; available: general-purpose, Explore, Plan, fixer, planner, reviewer`
	if !res.IsError || !strings.Contains(res.Content, want) {
		t.Errorf("Agent(nosuch) = %+v; want an error with %q", res, want)
	}
}

// teammateRecorder records the teammate requests it gets.
type teammateRecorder struct{ got agenttool.TeammateRequest }

func (r *teammateRecorder) SpawnTeammate(_ context.Context, req agenttool.TeammateRequest) (agenttool.TeammateInfo, error) {
	r.got = req
	return agenttool.TeammateInfo{AgentID: req.Name + "@t", Name: req.Name, Team: "t", Model: req.Model, PlanModeRequired: req.PlanModeRequired}, nil
}

func TestTeammateFromDefinition(t *testing.T) {
	rec := &teammateRecorder{}
	tl := agenttool.New(agenttool.Config{Agents: definitions(t), Teammates: rec})
	res := run(t, tl, `{"description": "d", "prompt": "plan it", "name": "ann", "subagent_type": "planner"}`)
	if res.IsError {
		t.Fatalf("Agent = %+v", res)
	}
	if rec.got.AgentType != "planner" || rec.got.Model != "claude-opus-4-1" || rec.got.Mode != "plan" || !rec.got.PlanModeRequired || rec.got.Color != "purple" {
		t.Errorf("teammate request = %+v; want the planner definition's type, model, plan mode and color", rec.got)
	}
}

func writeFile(dir, name, src string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644)
}

func TestSpecListsTypes(t *testing.T) {
	d := agenttool.New(agenttool.Config{Agents: definitions(t)}).Spec().Description
	for _, want := range []string{"- Explore: Fast read-only", "(Tools: Read, Glob, Grep, WebFetch, WebSearch, Skill)", "- reviewer: reviews (Tools: Read, Grep)", "- fixer: fixes (Tools: all your tools)"} {
		if !strings.Contains(d, want) {
			t.Errorf("Agent description lacks %q:\n%s", want, d)
		}
	}
}
