package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// ToolConfig configures the Workflow tool.
type ToolConfig struct {
	// Registry runs each workflow as a local_workflow task; required.
	Registry *task.Registry
	// Root is where run folders go (the session's workflows folder).
	Root string
	// Roots, when set, lists the other folders resumeFromRunId may name
	// a run in (the workflows folders of the project's other sessions).
	Roots func() []string
	// Dirs are the folders of named workflows (see Dirs).
	Dirs []string
	// Runner runs the workflows' agents (sub-agents of the caller).
	Runner Runner
	// Options bound each run (concurrency, agent cap, budget).
	Options Options
}

// Tool is the Workflow tool: the lead starts a workflow in the background.
type Tool struct{ cfg ToolConfig }

var _ tool.Tool = (*Tool)(nil)

// NewTool returns the Workflow tool.
func NewTool(cfg ToolConfig) *Tool { return &Tool{cfg: cfg} }

const toolSchema = `{
  "type": "object",
  "properties": {
    "script": {"type": "string", "description": "The workflow script (JavaScript): export const meta = {name, description, phases: [{title, detail?}]} as a literal, then a body that may use top-level await and return a value"},
    "name": {"type": "string", "description": "A named workflow: .claude/workflows/<name>.js or .troupe/workflows/<name>.js in the project, or the same in your home folders"},
    "scriptPath": {"type": "string", "description": "A script file to run (such as the script.js of an earlier run, edited)"},
    "args": {"description": "Any JSON value: the script's args global, verbatim"},
    "resumeFromRunId": {"type": "string", "description": "A run id (wf_...): agent() calls that finished in that run with the same prompt and options are answered from its journal, in order, up to the first that changed, failed or never finished"},
    "description": {"type": "string", "description": "A short label for the task (default: meta.name)"}
  },
  "additionalProperties": false
}`

const toolDescription = `Runs a workflow: a JavaScript script that orchestrates sub-agents deterministically, in the background, as a task (w id). Use it when work fans out to many agents in fixed phases (review many files, then verify each finding), so that the plan lives in a script that can be read, rerun and resumed.

The script starts with a literal:
  export const meta = { name: "review", description: "...", phases: [{ title: "Review" }, { title: "Verify" }] }
then may use top-level await and return a value. Its globals (and nothing else: no files, network, timers or require):
- agent(prompt, opts) -> Promise of the agent's final text; with opts.schema (a JSON Schema) the agent must answer JSON that validates (retried once), and the promise gives the parsed value. opts: label, phase (a meta phase title), schema, model, agentType, isolation ("worktree"), tools (names), cwd.
- parallel([() => ..., ...], {failFast}) -> results in order; a failed slot is undefined (its error in results.errors) unless failFast, which rejects and stops the others.
- pipeline(items, stage1, stage2, ...) -> each item moves through the stages on its own; a stage gets (previous, item, index).
- phase(title), log(...), sleep(ms), args.
Agents run as your sub-agents, with your permissions, a few at a time. The call returns at once with the task id and the run id; you are notified with the return value when the run ends. Do not poll it.`

// Spec implements tool.Tool.
func (t *Tool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Workflow", Description: toolDescription, InputSchema: json.RawMessage(toolSchema)}
}

// ReadOnly implements tool.Tool: its agents may change anything.
func (*Tool) ReadOnly(json.RawMessage) bool { return false }

type toolInput struct {
	Script          string          `json:"script"`
	Name            string          `json:"name"`
	ScriptPath      string          `json:"scriptPath"`
	Args            json.RawMessage `json:"args"`
	ResumeFromRunID string          `json:"resumeFromRunId"`
	Description     string          `json:"description"`
}

// Run implements tool.Tool.
func (t *Tool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in toolInput
	if res, ok := tool.Decode("Workflow", call.Input, &in); !ok {
		return res, nil
	}
	n := 0
	for _, s := range []string{in.Script, in.Name, in.ScriptPath} {
		if strings.TrimSpace(s) != "" {
			n++
		}
	}
	if n != 1 {
		return tool.Errorf("Workflow: give exactly one of script, name and scriptPath"), nil
	}
	var s *Script
	var err error
	switch {
	case in.Script != "":
		s, err = Parse("script.js", in.Script)
	case in.Name != "":
		var p string
		if p, err = Find(t.cfg.Dirs, in.Name); err == nil {
			s, err = Load(p)
		}
	default:
		s, err = Load(in.ScriptPath)
	}
	if err != nil {
		return tool.Errorf("Workflow: %v", err), nil
	}
	if string(in.Args) == "null" {
		in.Args = nil
	}
	resumeRoot := t.cfg.Root
	if id := in.ResumeFromRunID; id != "" && t.cfg.Roots != nil {
		if _, err := RunPath(resumeRoot, id); err != nil {
			for _, r := range t.cfg.Roots() {
				if _, err := RunPath(r, id); err == nil {
					resumeRoot = r
					break
				}
			}
		}
	}
	j, err := Prepare(Launch{Script: s, Args: in.Args, Root: t.cfg.Root, ResumeFrom: in.ResumeFromRunID, ResumeRoot: resumeRoot,
		Runner: t.cfg.Runner, Options: t.cfg.Options})
	if err != nil {
		return tool.Errorf("Workflow: %v", err), nil
	}
	st, err := StartTask(t.cfg.Registry, j, in.Description, call.ID)
	if err != nil {
		return tool.Errorf("Workflow: could not start: %v", err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow %q started in the background.\ntask id: %s (TaskOutput reads its progress, TaskStop stops it and its agents)\nrun id: %s\nscript: %s (edit it and pass scriptPath, with resumeFromRunId %s, to iterate)\n",
		s.Meta.Name, st.ID, j.ID, filepath.Join(j.Dir.Path, ScriptFile), j.ID)
	if len(s.Meta.Phases) > 0 {
		fmt.Fprintf(&b, "phases: %s\n", strings.Join(s.Meta.PhaseTitles(), " → "))
	}
	b.WriteString("You will be notified with its return value when it ends: do not poll it. Continue with other work or end your turn.")
	return tool.Result{Content: b.String()}, nil
}
