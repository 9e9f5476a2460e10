package approve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/ask"
)

// QuestionCommand puts an agent's questions (AskUserQuestion) to the
// --permission-prompt-command program (docs/ask.md), run in Cwd. It
// implements tool/asktool's Asker.
//
// The program reads {"kind":"question","tool_name":"AskUserQuestion",
// "input":{"questions":[...]},...} and answers one of:
//
//	{"answers":{"<question text>":"<label, labels joined by \", \", or free text>"}}
//	{"behavior":"allow","updatedInput":{"questions":[...],"answers":{...}}}   (Claude Code's SDK shape)
//	{"behavior":"deny","message":"<why, for the model>"}
type QuestionCommand struct {
	Command *Command
	Cwd     string
}

// questionAnswer is what the program prints for a question.
type questionAnswer struct {
	Answers           ask.Answers     `json:"answers"`
	Behavior          string          `json:"behavior"`
	Message           string          `json:"message"`
	UpdatedInput      json.RawMessage `json:"updated_input"`
	UpdatedInputCamel json.RawMessage `json:"updatedInput"`
}

// AskQuestions runs the program on r. An answer that names a question
// not asked, or none, is an error saying so.
func (q QuestionCommand) AskQuestions(ctx context.Context, r ask.Request) (ask.Reply, error) {
	input, err := json.Marshal(ask.Input{Questions: r.Questions})
	if err != nil {
		return ask.Reply{}, err
	}
	agent := r.Agent
	if agent == "team-lead" {
		agent = "" // the lead's own, as with permission requests
	}
	out, err := q.Command.run(ctx, CommandRequest{Kind: KindQuestion, Agent: agent, ToolName: ask.ToolName, Input: input, ToolUseID: r.ToolUseID,
		Reason: "the agent asks the person", Cwd: q.Cwd})
	if err != nil {
		return ask.Reply{}, err
	}
	var ans questionAnswer
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&ans); err != nil || dec.More() {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return ask.Reply{}, fmt.Errorf("permission prompt command %q printed no valid answer to a question (%v): %q; want {\"answers\":{\"<question>\":\"<answer>\"}} or {\"behavior\":\"deny\",\"message\":\"...\"}", q.Command.Shell, err, truncate(string(out), 200))
	}
	if ans.Behavior == "deny" {
		return ask.Reply{Declined: true, Reason: ans.Message}, nil
	}
	if ans.Behavior != "" && ans.Behavior != "allow" {
		return ask.Reply{}, fmt.Errorf("permission prompt command %q answered a question with behavior %q; want \"allow\" (with answers) or \"deny\"", q.Command.Shell, ans.Behavior)
	}
	a := ans.Answers
	if len(a) == 0 {
		for _, u := range []json.RawMessage{ans.UpdatedInput, ans.UpdatedInputCamel} {
			if got, ok := ask.AnswersOf(u); ok {
				a = got
				break
			}
		}
	}
	if err := a.Check(r.Questions); err != nil {
		return ask.Reply{}, fmt.Errorf("permission prompt command %q: %w", q.Command.Shell, err)
	}
	return ask.Reply{Answers: a}, nil
}
