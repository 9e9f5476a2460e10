package session

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// Question is a permission question waiting for a person: the lead's own
// call, or a teammate's that bubbled up to the lead.
type Question struct {
	ID     string // what Answer names
	Agent  string // who asks: team-lead or a teammate's name
	Color  string // a teammate's color
	Tool   string
	Input  json.RawMessage
	Reason string // why the rules ask
	// Teammate says the question is a teammate's: an Always answer then
	// allows the call for the whole team.
	Teammate bool
	// Plan is set when the question is a teammate's plan to approve
	// (Tool is then empty): Allow approves it, Message is the feedback
	// of a rejection.
	Plan string
	// Questions is set when the question is an agent's questions to
	// the person (AskUserQuestion, docs/ask.md; Tool is then empty):
	// Allow with Answers answers them, a denial declines them with
	// Message as the reason.
	Questions []ask.Question
	// Always is the rule an Always answer saves when it names none: the
	// rule that covers exactly this call (permission.ExactRule), set by
	// Ask, so that a dialog can show it before the person chooses. Empty
	// when no rule can name the call exactly: an Always answer then
	// allows it once.
	Always string
}

// Verdict is a person's answer to a Question.
type Verdict struct {
	Allow bool
	// Always allows calls like this one from now on (for a teammate's
	// question, for the whole team, with Rule or the call's exact rule).
	Always bool
	Rule   string
	// Message is what the asking agent's model sees with a denial.
	Message string
	// Answers answers a Question's Questions (with Allow).
	Answers ask.Answers
}

// Kinds of the permission events; Event.Question is set on both,
// Event.Verdict on the answer, and Event.Queued says how many questions
// wait.
const (
	KindPermission       Kind = "permission"        // a question waits for Answer
	KindPermissionAnswer Kind = "permission_answer" // it was answered (or withdrawn: Err)
)

// asks is the session's permission queue.
type asks struct {
	mu      sync.Mutex
	pending map[string]*pendingAsk
	order   []string
}

type pendingAsk struct {
	q    Question
	done chan Verdict // 1 slot
}

// Ask puts q in the queue, reports it (KindPermission) and waits for its
// Answer or ctx's end (then the question is withdrawn).
func (s *Session) Ask(ctx context.Context, q Question) (Verdict, error) {
	q.ID = mailbox.NewID()
	if q.Tool != "" && q.Always == "" {
		q.Always = permission.ExactRule(q.Tool, q.Input, shell.Parse)
	}
	p := &pendingAsk{q: q, done: make(chan Verdict, 1)}
	s.asks.mu.Lock()
	if s.asks.pending == nil {
		s.asks.pending = map[string]*pendingAsk{}
	}
	s.asks.pending[q.ID] = p
	s.asks.order = append(s.asks.order, q.ID)
	queued := len(s.asks.order)
	s.asks.mu.Unlock()
	s.publish(Event{Kind: KindPermission, Question: &q, Queued: queued})
	select {
	case v := <-p.done:
		return v, nil
	case <-ctx.Done():
		if !s.withdraw(q.ID) {
			// Answer took it first, and reported the verdict: it holds.
			return <-p.done, nil
		}
		s.publish(Event{Kind: KindPermissionAnswer, Question: &q, Err: context.Cause(ctx), Queued: s.queued()})
		return Verdict{}, context.Cause(ctx)
	}
}

// Answer answers the waiting question id. An Always verdict that names
// no rule saves the question's Always rule; with none, the call is
// allowed once and a notice says why.
func (s *Session) Answer(id string, v Verdict) error {
	s.asks.mu.Lock()
	p, ok := s.asks.pending[id]
	s.asks.mu.Unlock()
	if ok && len(p.q.Questions) > 0 && v.Allow {
		if err := v.Answers.Check(p.q.Questions); err != nil {
			return fmt.Errorf("session: answers to question %s: %w", id, err)
		}
	}
	if !ok || !s.withdraw(id) {
		return fmt.Errorf("session: no question %q waits for an answer (answered already, or withdrawn)", id)
	}
	if v.Allow && v.Always && v.Rule == "" {
		if v.Rule = p.q.Always; v.Rule == "" {
			v.Always = false
			s.publish(Event{Kind: KindNotice, Text: "allow always: no rule names exactly this call (one simple command of plain words, a file or a host); it was allowed once"})
		}
	}
	p.done <- v
	s.publish(Event{Kind: KindPermissionAnswer, Question: &p.q, Verdict: &v, Queued: s.queued()})
	return nil
}

// Questions returns the waiting questions, oldest first.
func (s *Session) Questions() []Question {
	s.asks.mu.Lock()
	defer s.asks.mu.Unlock()
	out := make([]Question, 0, len(s.asks.order))
	for _, id := range s.asks.order {
		out = append(out, s.asks.pending[id].q)
	}
	return out
}

// withdraw takes id out of the queue; it reports whether it was there.
func (s *Session) withdraw(id string) bool {
	s.asks.mu.Lock()
	defer s.asks.mu.Unlock()
	if _, ok := s.asks.pending[id]; !ok {
		return false
	}
	delete(s.asks.pending, id)
	for i, x := range s.asks.order {
		if x == id {
			s.asks.order = append(s.asks.order[:i], s.asks.order[i+1:]...)
			break
		}
	}
	return true
}

func (s *Session) queued() int {
	s.asks.mu.Lock()
	defer s.asks.mu.Unlock()
	return len(s.asks.order)
}

// LeadAsker returns an approve.Asker that puts the lead's own questions
// in the queue. An Always verdict also adds its rule (the call's exact
// rule when it names none) to the lead's rules (AddRule).
func (s *Session) LeadAsker() approve.Asker {
	return approve.AskerFunc(func(ctx context.Context, r approve.AskRequest) (approve.Answer, error) {
		v, err := s.Ask(ctx, Question{Agent: team.LeadName, Tool: r.Tool, Input: r.Input, Reason: r.Reason})
		if err != nil {
			return approve.Answer{}, err
		}
		if v.Allow && v.Always && v.Rule != "" {
			rule := v.Rule
			if err := s.AddRule(permission.Allow, rule); err != nil {
				s.publish(Event{Kind: KindNotice, Text: "allow always: " + err.Error()})
			}
		}
		return approve.Answer{Allow: v.Allow, Message: v.Message}, nil
	})
}

// Rules returns the lead's rules in force: allow, ask and deny.
func (s *Session) Rules() (allow, ask, deny []permission.Rule) {
	a := s.leadApprover()
	if a == nil {
		return nil, nil, nil
	}
	return a.Rules()
}

func (s *Session) leadApprover() *swarm.Approver {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.approver
}

// AddRule adds a rule of behavior b to the lead's rules from its next
// tool call on, and keeps it (Config.SaveRule). A rule that does not
// parse changes nothing.
func (s *Session) AddRule(b permission.Behavior, rule string) error {
	a := s.leadApprover()
	if a == nil {
		return errors.New("session: the lead's rules cannot change (no approver handed over)")
	}
	source := cmp.Or(s.cfg.RuleSource, "session")
	if err := a.AddRule(b, rule, source); err != nil {
		return err
	}
	s.publish(Event{Kind: KindRules, Text: fmt.Sprintf("added %s rule %s", b, rule)})
	if s.cfg.SaveRule != nil {
		if err := s.cfg.SaveRule(b, rule, true); err != nil {
			return fmt.Errorf("the rule is in force for this session, but was not saved: %w", err)
		}
	}
	return nil
}

// RemoveRule takes a rule of behavior b out of the lead's rules, and out
// of Config.RuleSource when it came from there. A rule from another
// settings file is out of force for this session only: the returned note
// says which file still lists it.
func (s *Session) RemoveRule(b permission.Behavior, rule string) (note string, err error) {
	a := s.leadApprover()
	if a == nil {
		return "", errors.New("session: the lead's rules cannot change (no approver handed over)")
	}
	sources, err := a.RemoveRule(b, rule)
	if err != nil {
		return "", err
	}
	if len(sources) == 0 {
		return "", fmt.Errorf("no %s rule %s is in force (/permissions lists them)", b, rule)
	}
	s.publish(Event{Kind: KindRules, Text: fmt.Sprintf("removed %s rule %s", b, rule)})
	var elsewhere []string
	for _, src := range slices.Compact(slices.Sorted(slices.Values(sources))) {
		switch {
		case src == s.cfg.RuleSource && s.cfg.SaveRule != nil:
			if err := s.cfg.SaveRule(b, rule, false); err != nil {
				return "", fmt.Errorf("the rule is out of force for this session, but still in %s: %w", src, err)
			}
		case src != "" && src != "session":
			elsewhere = append(elsewhere, src)
		}
	}
	if len(elsewhere) > 0 {
		note = fmt.Sprintf("out of force for this session; %s still lists it", strings.Join(elsewhere, " and "))
	}
	return note, nil
}

// PlanAnswerer returns the swarm.PlanAnswerer that puts teammates' plans
// in the queue, for swarm.LeadConfig.AnswerPlan.
func (s *Session) PlanAnswerer() swarm.PlanAnswerer {
	return func(ctx context.Context, a swarm.PlanAsk) (swarm.PlanAnswer, error) {
		v, err := s.Ask(ctx, Question{Agent: a.Worker, Color: a.Color, Plan: a.Plan, Reason: "plan " + a.RequestID, Teammate: true})
		if err != nil {
			return swarm.PlanAnswer{}, err
		}
		return swarm.PlanAnswer{Approve: v.Allow, Feedback: v.Message}, nil
	}
}

// TeamAnswerer returns the swarm.Answerer that puts teammates' questions
// in the queue, for swarm.LeadConfig.Answer.
func (s *Session) TeamAnswerer() swarm.Answerer {
	return func(ctx context.Context, a swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
		v, err := s.Ask(ctx, Question{Agent: a.Worker, Color: a.Color, Tool: a.Tool, Input: a.Input, Reason: a.Description, Teammate: true})
		if err != nil {
			return swarm.PermissionAnswer{}, err
		}
		return swarm.PermissionAnswer{Allow: v.Allow, Always: v.Always, Rule: v.Rule, Message: v.Message}, nil
	}
}

// AskQuestions puts the lead's questions (AskUserQuestion) in the queue
// and waits for the person (tool/asktool's Asker).
func (s *Session) AskQuestions(ctx context.Context, r ask.Request) (ask.Reply, error) {
	return s.askQuestions(ctx, Question{Agent: cmp.Or(r.Agent, team.LeadName), Questions: r.Questions, Reason: "question"})
}

// TeamQuestions returns the swarm.QuestionAnswerer that puts teammates'
// questions in the queue, with their badge, for
// swarm.LeadConfig.AnswerQuestions.
func (s *Session) TeamQuestions() swarm.QuestionAnswerer {
	return func(ctx context.Context, a swarm.QuestionAsk) (ask.Reply, error) {
		return s.askQuestions(ctx, Question{Agent: a.Worker, Color: a.Color, Questions: a.Questions, Reason: "question", Teammate: true})
	}
}

func (s *Session) askQuestions(ctx context.Context, q Question) (ask.Reply, error) {
	v, err := s.Ask(ctx, q)
	if err != nil {
		return ask.Reply{}, err
	}
	if !v.Allow || len(v.Answers) == 0 {
		return ask.Reply{Declined: true, Reason: v.Message}, nil
	}
	return ask.Reply{Answers: v.Answers}, nil
}
