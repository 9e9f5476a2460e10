package session

import (
	"context"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
)

// The lead's and a teammate's questions wait in the one queue with their
// askers; answers to questions not asked are refused and leave the
// question waiting; an answer and a decline reach the askers.
func TestAskQuestions(t *testing.T) {
	reg := task.New(task.Config{Dir: t.TempDir()})
	defer reg.Close(context.Background())
	s, err := New(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	qs := []ask.Question{{Question: "Which DB?", Header: "DB", Options: []ask.Option{{Label: "a", Description: "x"}, {Label: "b", Description: "y"}}}}
	type result struct {
		r   ask.Reply
		err error
	}
	lead, mate := make(chan result, 1), make(chan result, 1)
	go func() {
		r, err := s.AskQuestions(t.Context(), ask.Request{Agent: "team-lead", Questions: qs})
		lead <- result{r, err}
	}()
	waitQueued(t, s, 1)
	go func() {
		r, err := s.TeamQuestions()(t.Context(), swarm.QuestionAsk{Worker: "ann", Color: "blue", Questions: qs})
		mate <- result{r, err}
	}()
	got := waitQueued(t, s, 2)
	if got[0].Agent != "team-lead" || got[1].Agent != "ann" || got[1].Color != "blue" || !got[1].Teammate || len(got[1].Questions) != 1 || got[0].Tool != "" {
		t.Fatalf("queue = %+v", got)
	}
	if err := s.Answer(got[0].ID, Verdict{Allow: true, Answers: ask.Answers{"Which?": "a"}}); err == nil {
		t.Fatal("an answer to a question not asked was taken")
	}
	if err := s.Answer(got[0].ID, Verdict{Allow: true, Answers: ask.Answers{"Which DB?": "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Answer(got[1].ID, Verdict{Message: "the user declined to answer"}); err != nil {
		t.Fatal(err)
	}
	if r := <-lead; r.err != nil || r.r.Answers["Which DB?"] != "b" {
		t.Errorf("the lead's reply = %+v, %v", r.r, r.err)
	}
	if r := <-mate; r.err != nil || !r.r.Declined || r.r.Reason != "the user declined to answer" {
		t.Errorf("the teammate's reply = %+v, %v", r.r, r.err)
	}
}

func waitQueued(t *testing.T, s *Session, n int) []Question {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if q := s.Questions(); len(q) == n {
			return q
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d questions queued; want %d", len(s.Questions()), n)
		}
		time.Sleep(time.Millisecond)
	}
}
