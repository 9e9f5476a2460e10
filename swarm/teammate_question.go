package swarm

import (
	"context"
	"encoding/json"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/permission/approve"
)

// PersonAsker puts a teammate's questions (AskUserQuestion) to its lead's
// person along the teammate's permission path (Asker: Teammate.Ask for a
// teammate in a pane, AskMirrored for one in the lead's process): a
// permission request for ask.ToolName, whose allowed answer carries the
// answers in its updated input (docs/ask.md). It implements
// tool/asktool's Asker.
type PersonAsker struct {
	Asker approve.Asker
	Cwd   string
}

// AskQuestions puts r to the lead. A denial is a declined question
// whose reason the model reads.
func (p PersonAsker) AskQuestions(ctx context.Context, r ask.Request) (ask.Reply, error) {
	input, err := json.Marshal(ask.Input{Questions: r.Questions})
	if err != nil {
		return ask.Reply{}, err
	}
	ans, err := p.Asker.Ask(ctx, approve.AskRequest{Agent: r.Agent, Tool: ask.ToolName, ToolUseID: r.ToolUseID, Input: input, Cwd: p.Cwd,
		Reason: "asks the person " + ask.Summary(r.Questions)})
	if err != nil {
		return ask.Reply{}, err
	}
	if !ans.Allow {
		return ask.Reply{Declined: true, Reason: ans.Message}, nil
	}
	a, ok := ask.AnswersOf(ans.UpdatedInput)
	if !ok {
		return ask.Reply{Declined: true, Reason: "the team lead allowed the question without answering it"}, nil
	}
	return ask.Reply{Answers: a}, nil
}
