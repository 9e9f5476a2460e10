package swarm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// QuestionAsk is a teammate's question to the person (AskUserQuestion,
// docs/ask.md) reaching the lead. It travels as a permission request
// whose tool is ask.ToolName; no team rule answers it.
type QuestionAsk struct {
	Worker, Color string
	ToolUseID     string
	Questions     []ask.Question
	InProcess     bool
}

// QuestionAnswerer puts a teammate's questions to the lead's person (or
// the program that answers for it).
type QuestionAnswerer func(ctx context.Context, a QuestionAsk) (ask.Reply, error)

// askPerson answers a teammate's question: the person's answers ride
// back as the call's updated input (ask.WithAnswers); a declined
// question is a denial whose Message says why.
func (l *Lead) askPerson(ctx context.Context, a PermissionAsk) (PermissionAnswer, error) {
	in, err := ask.Parse(a.Input)
	if err != nil {
		return PermissionAnswer{Message: "invalid questions: " + err.Error()}, nil
	}
	what := fmt.Sprintf("%s asks the person: %s", a.Worker, firstLine(ask.Summary(in.Questions), 80))
	if l.cfg.AnswerQuestions == nil {
		l.event(a.Worker, EventPermission, what+": nobody can answer")
		return PermissionAnswer{Message: ask.NoPerson}, nil
	}
	r, err := l.cfg.AnswerQuestions(ctx, QuestionAsk{Worker: a.Worker, Color: a.Color, ToolUseID: a.ToolUseID, Questions: in.Questions, InProcess: a.InProcess})
	if err != nil {
		return PermissionAnswer{}, err
	}
	if r.Declined || len(r.Answers) == 0 {
		why := r.Reason
		if why == "" {
			why = "the user declined to answer"
		}
		l.event(a.Worker, EventPermission, what+": not answered ("+why+")")
		return PermissionAnswer{Message: why}, nil
	}
	updated, err := ask.WithAnswers(a.Input, r.Answers)
	if err != nil {
		return PermissionAnswer{Message: err.Error()}, nil
	}
	l.event(a.Worker, EventPermission, what+": answered")
	return PermissionAnswer{Allow: true, UpdatedInput: updated}, nil
}

// Answered builds the lead's answer to a question that came by mail (a
// permission request for ask.ToolName): allowed, with the answers in its
// updated input. The lead and the dashboard use it.
func Answered(f mailbox.PermissionRequest, a ask.Answers) (mailbox.PermissionResponse, error) {
	updated, err := ask.WithAnswers(f.Input, a)
	if err != nil {
		return mailbox.PermissionResponse{}, err
	}
	return withInput(f, updated)
}

// Unanswered builds the answer to a question that came by mail and was
// declined: why is what the asking model reads.
func Unanswered(f mailbox.PermissionRequest, why string) mailbox.PermissionResponse {
	return mailbox.PermissionResponse{RequestID: f.RequestID, ToolUseID: f.ToolUseID, Subtype: "error", Error: why}
}

// withInput is Verdict's allow with updated as the updated input.
func withInput(f mailbox.PermissionRequest, updated json.RawMessage) (mailbox.PermissionResponse, error) {
	resp, err := Verdict(f, true, nil, "")
	if err != nil {
		return resp, err
	}
	resp.Response.UpdatedInput = updated
	return resp, nil
}

// answerQuestionMail answers a teammate's question that came by mail.
func (l *Lead) answerQuestionMail(ctx context.Context, teamName string, m mailbox.Message, f mailbox.PermissionRequest) {
	ans, err := l.askPerson(ctx, PermissionAsk{Worker: m.From, Color: m.Color, Tool: f.ToolName, ToolUseID: f.ToolUseID, Input: f.Input})
	var resp mailbox.PermissionResponse
	switch {
	case err != nil:
		resp = Unanswered(f, "the team lead could not ask: "+err.Error())
	case ans.Allow:
		if resp, err = withInput(f, ans.UpdatedInput); err != nil {
			resp = Unanswered(f, err.Error())
		}
	default:
		resp = Unanswered(f, ans.Message)
	}
	text, err := mailbox.Encode(resp)
	if err == nil {
		_, err = l.cfg.Mail.Send(ctx, teamName, m.From, mailbox.Message{From: team.LeadName, Text: text})
	}
	if err != nil && ctx.Err() == nil {
		l.cfg.Log.Warn("answer a question", "agent", m.From, "err", err)
	}
}
