package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
)

// MainSession is the AgentType of the local_agent task that holds a
// backgrounded turn of the lead (the seed's main-session task), or a
// conversation of the lead set aside by Foreground.
const MainSession = "main-session"

// LeadFactory builds a lead agent that continues history. Its OnEvent
// must call observe, which reports the event in the session and says
// whether the agent is the foreground lead at that moment (a caller that
// records the lead's conversation records only those events).
type LeadFactory func(history []llm.Message, observe func(agent.Event) bool) (*agent.Agent, error)

// seat is one lead agent's place: the foreground, or (task set) the
// background task that holds it. Guarded by Session.mu.
type seat struct {
	s      *Session
	ag     *agent.Agent
	task   task.ID       // "" in the foreground
	ended  chan struct{} // closed when a backgrounded turn's run has ended
	inTurn bool          // a model turn of ag runs (Session.turn)
	halt   bool          // Interrupt came during the run: no further turn starts
	going  bool          // away, and its run still goes on
	base   []llm.Message // the conversation before the current turn
	prompt string        // the current turn's prompt
}

func (st *seat) observe(e agent.Event) bool {
	st.s.mu.Lock()
	id := st.task
	st.s.mu.Unlock()
	if id != "" {
		st.s.publish(Event{Kind: agentKind(e.Type), Agent: &e, TaskID: string(id)})
		return false
	}
	st.s.Observe(e)
	return true
}

// StartLead builds the session's lead with f on history and makes it the
// foreground lead; f is kept to build the fresh lead that Background
// leaves in the foreground.
func (s *Session) StartLead(f LeadFactory, history []llm.Message) (*agent.Agent, error) {
	if f == nil {
		return nil, errors.New("session: no lead factory")
	}
	st := &seat{s: s}
	ag, err := f(history, st.observe)
	if err != nil {
		return nil, err
	}
	st.ag = ag
	s.mu.Lock()
	defer s.mu.Unlock()
	s.factory, s.lead, s.seat = f, ag, st
	return ag, nil
}

// ErrNotWorking is returned by Background when the lead is not in a
// model turn.
var ErrNotWorking = errors.New("session: the lead is not working on a turn")

// Background moves the lead's running turn into a local_agent task (type
// MainSession) that goes on by itself and notifies the lead when it ends,
// and leaves a fresh lead in the foreground that continues the
// conversation from before that turn: the prompt is free for the next
// request. Stopping the task interrupts the turn. It needs a lead started
// with StartLead.
func (s *Session) Background(ctx context.Context) (task.ID, error) {
	s.mu.Lock()
	if s.factory == nil || s.seat == nil {
		s.mu.Unlock()
		return "", errors.New("session: backgrounding needs a lead started with StartLead")
	}
	old, factory := s.seat, s.factory
	if !old.inTurn {
		s.mu.Unlock()
		return "", ErrNotWorking
	}
	base, prompt := old.base, old.prompt
	s.mu.Unlock()
	// A turn cut short earlier (interrupted) leaves a prompt without an
	// answer: the fresh lead continues from the last complete exchange.
	n, _ := agent.CheckHistory(base)
	base = base[:n]

	fresh := &seat{s: s}
	ag, err := factory(base, fresh.observe)
	if err != nil {
		return "", fmt.Errorf("session: a fresh lead for the foreground: %w", err)
	}
	fresh.ag = ag
	desc := firstLine(prompt)
	if desc == "" {
		desc = "the lead's turn"
	}
	ended := make(chan struct{})
	st := task.State{ID: task.NewID(task.LocalAgent), Type: task.LocalAgent, Description: desc, Status: task.Running,
		Detail: &task.Agent{AgentID: "main", Prompt: prompt, AgentType: MainSession}}
	kill := func(ctx context.Context, _ task.State) error {
		old.ag.Interrupt()
		select {
		case <-ended:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}

	s.mu.Lock()
	if !old.inTurn || s.seat != old {
		s.mu.Unlock()
		ag.Kill()
		return "", ErrNotWorking
	}
	if _, err := s.reg.Register(st, kill); err != nil {
		s.mu.Unlock()
		ag.Kill()
		return "", err
	}
	old.task, old.ended, old.going = st.ID, ended, true
	s.away[st.ID] = old
	s.seat, s.lead = fresh, ag
	s.running = false
	s.mu.Unlock()
	s.publish(Event{Kind: KindBackgrounded, TaskID: string(st.ID), Text: prompt})
	return st.ID, nil
}

// foreground reports whether st is the foreground lead.
func (s *Session) foreground(st *seat) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return st == nil || st.task == ""
}

// endBackground ends the task of backgrounded seat st with the outcome of
// its run, and keeps st so that Foreground can bring its conversation
// back. It reports false when st was brought to the foreground meanwhile:
// the run goes on as the foreground's.
func (s *Session) endBackground(st *seat, res agent.Result, err error) bool {
	s.mu.Lock()
	id := st.task
	if id == "" {
		s.mu.Unlock()
		return false
	}
	st.going = false
	close(st.ended)
	s.mu.Unlock()
	status := task.Completed
	switch {
	case err != nil:
		status = task.Failed
	case res.Interrupted:
		status = task.Killed
	}
	messages := st.ag.Messages()
	s.reg.Finish(id, status, func(t task.State) task.State {
		if a, ok := t.Detail.(*task.Agent); ok {
			t.Detail = a.With(func(c *task.Agent) {
				c.Result, c.Messages = strings.TrimSpace(res.Text), messages
				c.Usage = task.Usage{TotalTokens: res.Usage.InputTokens + res.Usage.OutputTokens, ToolUses: res.ToolUses, Duration: res.Duration}
				if err != nil {
					c.Error = err.Error()
				}
			})
		}
		return t
	}) // stopped first (TaskStop): the registry has ended it already
	return true
}

// Foreground brings back the lead held by task id (a backgrounded turn,
// running or ended): its agent becomes the foreground lead again, and a
// turn still running reports to the foreground from then on. The lead
// that was in the foreground is backgrounded in turn when it is working,
// and otherwise set aside in a finished task of its own (Foreground
// brings it back too), so that no conversation is lost.
func (s *Session) Foreground(ctx context.Context, id task.ID) error {
	// What id names is checked before the working lead is moved aside: a
	// refused Foreground changes nothing.
	if err := s.canBringBack(id); err != nil {
		return err
	}
	if _, err := s.Background(ctx); err != nil && !errors.Is(err, ErrNotWorking) {
		return err
	}
	s.mu.Lock()
	target := s.away[id]
	if target == nil {
		s.mu.Unlock()
		return s.canBringBack(id) // brought back meanwhile
	}
	if s.running {
		s.mu.Unlock()
		return fmt.Errorf("session: the lead is waiting on its background work; bring %s back when it is idle: %w", id, ErrBusy)
	}
	cur := s.seat
	aside := task.State{ID: task.NewID(task.LocalAgent), Type: task.LocalAgent, Description: "the lead's conversation set aside for " + string(id),
		Detail: &task.Agent{AgentID: "main", AgentType: MainSession, Messages: cur.ag.Messages()}}
	if _, err := s.reg.Register(aside, nil); err != nil {
		s.mu.Unlock()
		return err
	}
	s.reg.FinishQuietly(aside.ID, task.Completed, nil)
	cur.task = aside.ID
	s.away[aside.ID] = cur
	delete(s.away, id)
	target.task = ""
	s.seat, s.lead = target, target.ag
	if target.going { // its run goes on, as the foreground's
		target.going = false
		close(target.ended) // a Stop waiting for the turn's end waits no more
		s.running = true
		s.reg.FinishQuietly(id, task.Completed, nil)
	}
	s.mu.Unlock()
	s.publish(Event{Kind: KindForegrounded, TaskID: string(id)})
	return nil
}

// canBringBack says why Foreground cannot bring back task id, nil when
// it holds a lead it can.
func (s *Session) canBringBack(id task.ID) error {
	s.mu.Lock()
	_, away := s.away[id]
	s.mu.Unlock()
	if away {
		return nil
	}
	if st, ok := s.reg.Get(id); !ok {
		return fmt.Errorf("session: no task %s", id)
	} else if d, ok := st.Detail.(*task.Agent); !ok || d.AgentType != MainSession {
		return fmt.Errorf("session: task %s is not a turn or conversation of the lead", id)
	}
	return fmt.Errorf("session: task %s holds no lead to bring back", id)
}

func agentKind(t agent.EventType) Kind {
	switch t {
	case agent.EventAssistant:
		return KindText
	case agent.EventToolUse:
		return KindToolStart
	case agent.EventToolResult:
		return KindToolResult
	case agent.EventRetry:
		return KindRetry
	case agent.EventCompact:
		return KindCompact
	}
	return KindAgent
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

// Serve is an interactive session's pump, until ctx ends: it reports the
// task events that come while the lead is idle, and starts a run when
// they or the team bring the lead input (a task's notification, a
// teammate's message, the idle digest once the team is quiet).
func (s *Session) Serve(ctx context.Context) error {
	events := make(chan struct{}, 1)
	go func() {
		for {
			if err := s.sub.Wait(ctx); err != nil {
				return
			}
			if !s.take() {
				continue // the lead or a waiting run took it
			}
			select {
			case events <- struct{}{}:
			default:
			}
		}
	}()
	for {
		var changed <-chan struct{}
		tm := s.Team()
		if tm != nil {
			changed = tm.Changed()
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-events:
		case <-s.wake:
		case <-changed:
		}
		s.kick(ctx, tm)
	}
}

// kick starts a run when the idle lead has input waiting, or the team is
// quiet with an idle digest for it.
func (s *Session) kick(ctx context.Context, tm *swarm.Lead) {
	s.mu.Lock()
	st, busy := s.seat, s.running || s.closed
	s.mu.Unlock()
	if busy || st == nil {
		return
	}
	if tm != nil && st.ag.Pending() == 0 && !s.active() {
		if quiet, err := tm.Quiet(ctx); err == nil && quiet {
			if d := tm.TakeDigest(); d != "" {
				st.ag.Send(d)
			}
		}
	}
	if st.ag.Pending() == 0 {
		return
	}
	s.mu.Lock()
	if s.running || s.closed {
		s.mu.Unlock()
		return
	}
	s.runs.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.runs.Done()
		_, _ = s.run(ctx, "", true)
	}()
}
