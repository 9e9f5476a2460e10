// Package asktool is the AskUserQuestion tool (docs/ask.md): the model
// asks the person one to four multiple-choice questions and gets the
// answers as the tool result. Who answers is an Asker: the person at the
// terminal, the team lead's person for a teammate, or a
// --permission-prompt-command program; with none, the call returns at
// once telling the model to go on with stated assumptions.
//
// The tool is not read-only (a call waits for a person, so it never runs
// beside other calls), and needs no permission rule: asking is not a
// permission (the permission flags allow it by a built-in rule, which a
// deny rule still beats). It is offered to leads and teammates, never to
// sub-agents, which have no person.
package asktool

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// Asker puts questions to whoever answers for the agent and waits for
// the reply. An error other than the context's is shown to the model.
// It returns ErrNoPerson when nobody can answer.
type Asker interface {
	AskQuestions(ctx context.Context, r ask.Request) (ask.Reply, error)
}

// AskerFunc adapts a function to Asker.
type AskerFunc func(ctx context.Context, r ask.Request) (ask.Reply, error)

// AskQuestions implements Asker.
func (f AskerFunc) AskQuestions(ctx context.Context, r ask.Request) (ask.Reply, error) {
	return f(ctx, r)
}

// ErrNoPerson says nobody can answer: the call tells the model to go on
// with stated assumptions.
var ErrNoPerson = errors.New(ask.NoPerson)

// Tool is AskUserQuestion.
type Tool struct {
	agent string
	asker Asker
}

// New returns the tool for agent (team-lead or a teammate's name),
// asking asker; a nil asker means nobody can answer.
func New(agent string, asker Asker) *Tool { return &Tool{agent: agent, asker: asker} }

var _ tool.Tool = (*Tool)(nil)

const description = `Ask the user one to four multiple-choice questions and wait for the answers. Use it when you need the user's preference, a decision between approaches, or a fact only they know, and guessing would waste work; do not use it for permission to run a tool (that is asked for you) or to ask whether a plan is good.

Each question has a short "header" (a chip label of at most 12 characters, such as "Database"), the "question" itself (clear, ending with a question mark), and 2 to 4 "options", each with a concise "label" (1-5 words) and a "description" of what choosing it means. Put the option you recommend first and end its label with "(Recommended)". Set "multiSelect": true when several options may be chosen together. The user can always answer in their own words instead ("Other"): never add an "Other" option yourself.

An option may carry a "preview": text shown beside the options while it is focused (a code snippet, an ASCII mockup, a configuration sample), for choices that are easier to compare by seeing them. Keep previews short; use them only when they help.

The answers come back as the tool result. If nobody can answer, continue with your best judgement and state your assumptions.`

var schema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "questions": {
      "type": "array",
      "minItems": 1,
      "maxItems": 4,
      "description": "The questions to ask (1 to 4).",
      "items": {
        "type": "object",
        "properties": {
          "question": {"type": "string", "description": "The full question, ending with a question mark."},
          "header": {"type": "string", "description": "A very short label shown as a chip (at most 12 characters), such as \"Auth method\"."},
          "options": {
            "type": "array",
            "minItems": 2,
            "maxItems": 4,
            "description": "2 to 4 choices; an \"Other\" free-text answer is always added for the user.",
            "items": {
              "type": "object",
              "properties": {
                "label": {"type": "string", "description": "What the user sees and picks: 1-5 words."},
                "description": {"type": "string", "description": "What choosing this option means: its trade-offs or consequences."},
                "preview": {"type": "string", "description": "Optional text shown beside the options while this one is focused: a snippet, a mockup, a sample."}
              },
              "required": ["label", "description"],
              "additionalProperties": false
            }
          },
          "multiSelect": {"type": "boolean", "description": "Let the user choose several options.", "default": false}
        },
        "required": ["question", "header", "options", "multiSelect"],
        "additionalProperties": false
      }
    }
  },
  "required": ["questions"],
  "additionalProperties": false
}`)

// Spec implements tool.Tool.
func (*Tool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: ask.ToolName, Description: description, InputSchema: schema}
}

// ReadOnly implements tool.Tool: a call waits for a person, alone.
func (*Tool) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (t *Tool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	in, err := ask.Parse(c.Input)
	if err != nil {
		return tool.Errorf("%s: invalid input: %v", ask.ToolName, err), nil
	}
	if t.asker == nil {
		return tool.Result{Content: ask.Unanswered(ask.Reply{Declined: true, Reason: ask.NoPerson})}, nil
	}
	r, err := t.asker.AskQuestions(ctx, ask.Request{Agent: t.agent, ToolUseID: c.ID, Questions: in.Questions})
	switch {
	case err != nil && ctx.Err() != nil:
		return tool.Result{}, context.Cause(ctx)
	case errors.Is(err, ErrNoPerson):
		return tool.Result{Content: ask.Unanswered(ask.Reply{Declined: true, Reason: ask.NoPerson})}, nil
	case err != nil:
		return tool.Result{Content: ask.Unanswered(ask.Reply{Declined: true, Reason: "the questions could not be asked: " + err.Error()})}, nil
	case r.Declined || len(r.Answers) == 0:
		return tool.Result{Content: ask.Unanswered(r)}, nil
	}
	if err := r.Answers.Check(in.Questions); err != nil {
		return tool.Result{Content: ask.Unanswered(ask.Reply{Declined: true, Reason: "the reply could not be used: " + err.Error()})}, nil
	}
	return tool.Result{Content: ask.Result(in.Questions, r.Answers)}, nil
}
