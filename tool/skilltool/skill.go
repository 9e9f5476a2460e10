// Package skilltool provides the Skill tool: an agent loads one of the
// skills listed in its system prompt (procedures the user keeps in
// .claude/skills/<name>/SKILL.md) and gets its instructions, with the
// folder that holds the files beside it.
package skilltool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// Skill is one loadable skill.
type Skill struct {
	Name, Description string
	Dir               string // its folder: files beside SKILL.md
	Body              string
	AllowedTools      []string
}

// Tool is the Skill tool over a fixed set of skills. It keeps no state
// and is safe for concurrent use.
type Tool struct {
	skills []Skill
	onLoad func(context.Context, Skill) // nil: nobody is told
}

// New returns the Skill tool for skills.
func New(skills []Skill) *Tool { return &Tool{skills: skills} }

// OnLoad returns a copy of t that calls f with each skill it loads,
// before its body reaches the model (an agent narrows its tools to the
// skill's allowed-tools there).
func (t *Tool) OnLoad(f func(context.Context, Skill)) *Tool {
	c := *t
	c.onLoad = f
	return &c
}

// Skills returns the skills t offers.
func (t *Tool) Skills() []Skill { return t.skills }

//go:embed skill.md
var description string

const schema = `{
  "type": "object",
  "properties": {
    "skill": {"type": "string", "description": "The name of the skill, as listed in <skills>"},
    "args": {"type": "string", "description": "Optional arguments for the skill"}
  },
  "required": ["skill"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*Tool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Skill", Description: description, InputSchema: json.RawMessage(schema)}
}

// ReadOnly implements tool.Tool: loading a skill reads its file.
func (*Tool) ReadOnly(json.RawMessage) bool { return true }

// Run implements tool.Tool.
func (t *Tool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		Skill string `json:"skill"`
		Args  string `json:"args"`
	}
	if res, ok := tool.Decode("Skill", call.Input, &in); !ok {
		return res, nil
	}
	name := strings.TrimPrefix(strings.TrimSpace(in.Skill), "/")
	i := slices.IndexFunc(t.skills, func(s Skill) bool { return s.Name == name })
	if i < 0 {
		names := make([]string, len(t.skills))
		for j, s := range t.skills {
			names[j] = s.Name
		}
		if len(names) == 0 {
			return tool.Errorf("Skill: no skill %q: there are no skills here", name), nil
		}
		return tool.Errorf("Skill: no skill %q; the skills are: %s", name, strings.Join(names, ", ")), nil
	}
	s := t.skills[i]
	if t.onLoad != nil {
		t.onLoad(ctx, s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %q loaded. Its files are in %s (read them with Read when its instructions refer to them).\n", s.Name, s.Dir)
	if len(s.AllowedTools) > 0 {
		fmt.Fprintf(&b, "Until this turn ends, only these tools may run: %s (Skill too, to load another skill).\n", strings.Join(s.AllowedTools, ", "))
	}
	if in.Args != "" {
		fmt.Fprintf(&b, "Arguments: %s\n", in.Args)
	}
	b.WriteString("\n" + strings.TrimSpace(s.Body))
	return tool.Result{Content: b.String()}, nil
}
