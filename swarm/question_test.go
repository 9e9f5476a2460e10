package swarm

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/permission/approve"
)

var dbQuestion = []ask.Question{{Question: "Which database?", Header: "Database", Options: []ask.Option{{Label: "Postgres", Description: "a"}, {Label: "SQLite", Description: "b"}}}}

// A teammate's questions reach the lead's QuestionAnswerer with its name
// and color, by mail (a pane teammate's way) and in process, and the
// answers come back; no team rule or permission mode answers them. With
// no answerer, the teammate is told nobody can answer.
func TestTeammateQuestion(t *testing.T) {
	var mu sync.Mutex
	var asked []QuestionAsk
	h := newHarness(t, script(`{"match":{},"reply":{"text":"ok"},"repeat":true}`), func(c *LeadConfig) {
		c.Answer = func(context.Context, PermissionAsk) (PermissionAnswer, error) {
			t.Error("a question reached the permission answerer")
			return PermissionAnswer{Allow: true, Always: true}, nil
		}
		c.AnswerQuestions = func(_ context.Context, a QuestionAsk) (ask.Reply, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, a)
			if len(asked) == 3 {
				return ask.Reply{Declined: true, Reason: "the user declined to answer"}, nil
			}
			return ask.Reply{Answers: ask.Answers{"Which database?": "SQLite"}}, nil
		}
	})
	h.mateCfg = func(c *TeammateConfig) { c.AskTimeout = 10 * time.Second }
	h.create("q")
	h.spawn("quinn", "stand by")
	h.waitFor("quinn runs", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.mates["quinn"] != nil })
	h.mu.Lock()
	tm := h.mates["quinn"]
	h.mu.Unlock()
	byMail := PersonAsker{Asker: approve.AskerFunc(tm.Ask)}
	inProcess := PersonAsker{Asker: approve.AskerFunc(func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) {
		return h.lead.AskInProcess(ctx, "quinn", "green", req)
	})}
	for _, tt := range []struct {
		name  string
		asker PersonAsker
		want  ask.Reply
	}{
		{"by mail", byMail, ask.Reply{Answers: ask.Answers{"Which database?": "SQLite"}}},
		{"in process", inProcess, ask.Reply{Answers: ask.Answers{"Which database?": "SQLite"}}},
		{"declined by mail", byMail, ask.Reply{Declined: true, Reason: "the user declined to answer"}},
	} {
		got, err := tt.asker.AskQuestions(t.Context(), ask.Request{Agent: "quinn", ToolUseID: "toolu_q", Questions: dbQuestion})
		if err != nil || got.Declined != tt.want.Declined || got.Reason != tt.want.Reason || got.Answers["Which database?"] != tt.want.Answers["Which database?"] {
			t.Errorf("%s: AskQuestions = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 3 || asked[0].Worker != "quinn" || asked[0].ToolUseID != "toolu_q" || asked[1].Color != "green" || !asked[1].InProcess || asked[0].Questions[0].Header != "Database" {
		t.Errorf("the lead was asked %+v", asked)
	}
}

// Without a QuestionAnswerer, a teammate's question is declined with
// the words that tell its model nobody can answer.
func TestTeammateQuestionNobody(t *testing.T) {
	h := newHarness(t, script(`{"match":{},"reply":{"text":"ok"},"repeat":true}`), nil)
	h.create("q")
	h.spawn("quinn", "stand by")
	h.waitFor("quinn runs", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.mates["quinn"] != nil })
	h.mu.Lock()
	tm := h.mates["quinn"]
	h.mu.Unlock()
	got, err := PersonAsker{Asker: approve.AskerFunc(tm.Ask)}.AskQuestions(t.Context(), ask.Request{Agent: "quinn", Questions: dbQuestion})
	if err != nil || !got.Declined || got.Reason != ask.NoPerson {
		t.Fatalf("AskQuestions = %+v, %v; want declined: %s", got, err, ask.NoPerson)
	}
}
