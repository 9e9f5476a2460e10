// Package session is one lead's runtime under every front end: it owns the
// lead agent's runs, the task registry behind its background work, and its
// agent team when it has one, and it reports everything that happens as
// one ordered stream of typed events (Subscribe) that the stream-json
// writer, and later the terminal and web front ends, consume.
//
// Inputs are methods, safe from any goroutine: Run (a headless run: the
// prompt, then everything its work brings in until the team is quiet),
// Submit (a prompt now, or at the next tool-round boundary when the lead
// is working), Interrupt, Stop (a background task), SendTo (a person's
// message to a teammate).
//
// The lead's agent is built by the caller with its OnEvent calling
// Session.Observe, and handed over with SetLead; the team's Deliver and
// OnEvent go to Session.Deliver and Session.TeamEvent.
package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
)

// Config sets up a Session.
type Config struct {
	// Registry runs the session's background tasks; the session reports
	// their events and hands their notifications to the lead.
	Registry *task.Registry
	// DigestQuiet holds teammates' idle notifications until the whole
	// team is quiet (else they come with the lead's next input).
	DigestQuiet bool
	// Interactive ends a run when the lead's model is done, instead of
	// when its background work and team are too (Run's headless way):
	// what comes in later starts a run of its own (Serve).
	Interactive bool
	// SaveRule, when set, keeps a person's rule change (AddRule,
	// RemoveRule, an "allow always" answer to the lead) beyond the
	// session, in the file named RuleSource.
	SaveRule   func(b permission.Behavior, rule string, add bool) error
	RuleSource string
	Now        func() time.Time
}

// Session is one lead's runtime. It is safe for concurrent use.
type Session struct {
	cfg  Config
	reg  *task.Registry
	sub  *task.Subscription
	bus  bus
	wake chan struct{} // 1-slot: the team delivered input for the lead
	asks asks          // permission questions waiting for a person (ask.go)

	mu       sync.Mutex
	lead     *agent.Agent // seat.ag
	seat     *seat        // the foreground lead's (background.go)
	away     map[task.ID]*seat
	factory  LeadFactory
	model    string          // SetModel's (clear.go); "" for the lead's own
	approver *swarm.Approver // the lead's, when its mode may change (SetMode)
	team     *swarm.Lead
	router   Router // route.go
	running  bool   // a Run or Submit is under way
	ended    bool   // a headless run ended: nothing will read a peer's message (peer.go)
	closed   bool   // Close was called: no run starts
	runs     sync.WaitGroup

	// subMu is held while one task event is taken from sub and reported,
	// so that the reports keep the registry's order whoever takes them
	// (the lead between tool rounds, a waiting run, Serve).
	subMu sync.Mutex

	clock clock // guarded by mu; the schedule and the firings held for the turn's end (schedule.go)
}

// New returns a Session over cfg.Registry.
func New(cfg Config) (*Session, error) {
	if cfg.Registry == nil {
		return nil, errors.New("session: no task registry")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Session{cfg: cfg, reg: cfg.Registry, sub: cfg.Registry.Subscribe(), wake: make(chan struct{}, 1), away: map[task.ID]*seat{}}, nil
}

// SetLead hands the session its lead agent, before the first run; its
// OnEvent calls Observe. A lead handed over this way cannot be
// backgrounded (see StartLead).
func (s *Session) SetLead(ag *agent.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lead, s.seat = ag, &seat{s: s, ag: ag}
}

// SetApprover hands the session the lead's approver, whose permission
// mode SetMode changes.
func (s *Session) SetApprover(a *swarm.Approver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approver = a
}

// Mode returns the lead's current permission mode; "" until an approver
// is handed over (SetApprover).
func (s *Session) Mode() permission.Mode {
	if a := s.leadApprover(); a != nil {
		return a.Mode()
	}
	return ""
}

// SetMode changes the lead's permission mode from its next tool call on
// (a KindMode event says so); teammates keep theirs.
func (s *Session) SetMode(mode string) error {
	s.mu.Lock()
	a := s.approver
	s.mu.Unlock()
	if a == nil {
		return errors.New("session: the lead's permission mode cannot change (no approver handed over)")
	}
	if err := a.SetMode(mode); err != nil {
		return err
	}
	s.publish(Event{Kind: KindMode, Text: string(a.Mode())})
	return nil
}

// SetDigestQuiet says whether teammates' idle notifications wait until the
// whole team is quiet (else they come with the lead's next input).
func (s *Session) SetDigestQuiet(quiet bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.DigestQuiet = quiet
}

// SetTeam hands the session the lead's team runtime.
func (s *Session) SetTeam(l *swarm.Lead) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.team = l
}

// Team returns the team runtime, nil without teams.
func (s *Session) Team() *swarm.Lead {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.team
}

// HideTeammate hides the tmux pane of teammate name (it goes on working)
// or, with hide false, brings it back, keeping the team file's
// hiddenPaneIds in step (swarm.Lead.Hide).
func (s *Session) HideTeammate(ctx context.Context, name string, hide bool) error {
	l := s.Team()
	if l == nil {
		return errors.New("this session leads no team")
	}
	if hide {
		return l.Hide(ctx, name)
	}
	return l.Show(ctx, name)
}

// Registry returns the session's task registry.
func (s *Session) Registry() *task.Registry { return s.reg }

// Subscribe returns a subscription to the session's events from now on.
// With coalesce, a task's queued progress is replaced by its next one.
func (s *Session) Subscribe(coalesce bool) *Subscription { return s.bus.subscribe(coalesce) }

func (s *Session) publish(e Event) {
	if e.Time.IsZero() {
		e.Time = s.cfg.Now()
	}
	s.bus.publish(e)
}

// Observe is the lead agent's OnEvent: it reports the agent event and
// hands the lead the notifications of tasks that ended meanwhile, so
// they reach a working lead between its tool rounds.
func (s *Session) Observe(e agent.Event) {
	s.publish(Event{Kind: agentKind(e.Type), Agent: &e})
	s.drain()
}

// TeamEvent is the team's OnEvent: it reports a line of the team's
// timeline, with the kind of what happened.
func (s *Session) TeamEvent(e swarm.Event) {
	s.publish(Event{Time: e.Time, Kind: teamKind(e.Kind), Team: &e})
}

// teamKind maps a swarm event's kind to the session's.
func teamKind(k string) Kind {
	switch k {
	case swarm.EventCreated:
		return KindTeamCreated
	case swarm.EventDeleted, swarm.EventRemoved:
		return KindTeamDeleted
	case swarm.EventSpawned, swarm.EventFallback:
		return KindTeammateJoined
	case swarm.EventIdle, swarm.EventShutdown, swarm.EventExit, swarm.EventDead:
		return KindTeammateState
	case swarm.EventMessage:
		return KindMessage
	case swarm.EventPermission, swarm.EventPlan:
		return KindTeamPermission
	}
	return KindTeam
}

// Deliver is the team's Deliver: it hands the lead input from its team
// (at its next tool-round boundary, or as its next run) and wakes a
// waiting run.
func (s *Session) Deliver(text string) {
	if lead := s.leadAgent(); lead != nil {
		lead.Send(text)
	}
	s.signal()
}

// Compact replaces the idle lead's conversation by a summary and its
// latest messages (agent.Agent.Compact), as /compact asks. The lead must
// be idle: no run starts while it compacts.
func (s *Session) Compact(ctx context.Context) error {
	s.mu.Lock()
	if s.seat == nil {
		s.mu.Unlock()
		return errors.New("session: no lead agent")
	}
	if s.running {
		s.mu.Unlock()
		return fmt.Errorf("the lead is working; compact when it is idle: %w", ErrBusy)
	}
	s.running = true
	ag := s.seat.ag
	s.mu.Unlock()
	err := ag.Compact(ctx)
	s.mu.Lock()
	s.running = false
	s.mu.Unlock()
	s.signal() // what came meanwhile starts a run (Serve)
	return err
}

// Running reports whether a run of the foreground lead is under way.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// Lead returns the foreground lead agent.
func (s *Session) Lead() *agent.Agent { return s.leadAgent() }

func (s *Session) leadAgent() *agent.Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lead
}

// handle reports one task event and queues its notification for the lead.
func (s *Session) handle(e task.Event) {
	kind := KindTaskProgress
	switch e.Kind {
	case task.EventStarted:
		kind = KindTaskStarted
	case task.EventTerminated:
		kind = KindTaskEnded
	case task.EventStalled:
		kind = KindTaskStalled
	case task.EventMonitor:
		kind = KindTaskMonitor
	}
	s.publish(Event{Kind: kind, Task: &e})
	if e.Notification != "" {
		text := SystemNotification(e.Notification)
		if s.route(e, text) {
			return // a running sub-agent's own task: for it (route.go)
		}
		if lead := s.leadAgent(); lead != nil {
			lead.Send(text)
		}
	}
}

// drain handles every queued task event.
func (s *Session) drain() {
	for s.take() {
	}
}

// take handles the next queued task event, if there is one.
func (s *Session) take() bool {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	e, ok := s.sub.TryNext()
	if ok {
		s.handle(e)
	}
	return ok
}

// active reports whether a task is still running, or has ended but not
// yet produced its notification (the two happen in separate steps).
// Teammates are tasks too, but whether the team still works is the
// team's to say (swarm.Lead.Quiet).
func (s *Session) active() bool {
	for _, st := range s.reg.List() {
		if st.Type == task.InProcessTeammate {
			continue
		}
		if st.Status.Active() || !st.Notified {
			return true
		}
	}
	return false
}

// ErrBusy is returned by Run while another run is under way.
var ErrBusy = errors.New("session: the lead is already working")

// Run runs the lead on prompt and then keeps it going while background
// work is active, its team is not quiet, or notifications and teammate
// messages wait for it, so that a headless run ends only after every task
// it started has finished and been reported and its teammates are idle.
// The result sums the runs; its text is the last run's. A team that did
// not end cleanly (swarm.Lead.Problems) makes it return an error.
func (s *Session) Run(ctx context.Context, prompt string) (agent.Result, error) {
	return s.run(ctx, prompt, false)
}

// run is Run; with resubmit (runs Submit started), input that reached the
// lead as the run ended (a prompt submitted while it was being
// interrupted) starts another run instead of waiting for the next Submit.
func (s *Session) run(ctx context.Context, prompt string, resubmit bool) (agent.Result, error) {
	s.mu.Lock()
	st, tm, digestQuiet := s.seat, s.team, s.cfg.DigestQuiet
	if st == nil {
		s.mu.Unlock()
		return agent.Result{}, errors.New("session: no lead agent")
	}
	if s.running {
		if resubmit && s.lead != nil {
			// Submit's run, and another started in between: that one takes
			// the prompt, sent under the lock its end looks at Pending
			// under, so the prompt is run or seen.
			if prompt != "" {
				s.lead.Send(prompt)
			}
			s.mu.Unlock()
			s.signal()
			return agent.Result{}, nil
		}
		s.mu.Unlock()
		return agent.Result{}, ErrBusy
	}
	if s.closed {
		s.mu.Unlock()
		return agent.Result{}, ErrClosed
	}
	if prompt == "" && st.ag.Pending() == 0 {
		// A run for input that another run took meanwhile: nothing to do.
		s.mu.Unlock()
		return agent.Result{}, nil
	}
	s.running, s.ended = true, false
	st.halt = false // an Interrupt of an earlier run is spent
	s.mu.Unlock()
	start := s.cfg.Now()
	s.publish(Event{Kind: KindTurnStarted, Text: prompt})
	res, err := s.turn(ctx, st, prompt)
	total := res
	again := func() {
		res, err = s.turn(ctx, st, "")
		total.Usage = total.Usage.Add(res.Usage)
		total.Calls += res.Calls
		total.ToolUses += res.ToolUses
		total.Text, total.StopReason, total.Interrupted = res.Text, res.StopReason, res.Interrupted
	}
	lead := st.ag
	for {
		ok := err == nil && !res.Interrupted && res.StopReason != agent.StopMaxTurns && !s.halted(st)
		if !s.foreground(st) { // backgrounded: its own input only, then its task ends
			if ok && ctx.Err() == nil && lead.Pending() > 0 {
				again()
				continue
			}
			total.Duration = s.cfg.Now().Sub(start)
			if s.endBackground(st, total, err) {
				return total, err
			}
			continue // brought back meanwhile: on as the foreground's run
		}
		if !ok {
			break
		}
		// Look at the tasks before draining: a task's notification is
		// queued when it is marked notified, so nothing slips between.
		active := s.active() || s.scheduled() // schedule.go: pending firings keep a headless run up
		s.drain()
		quiet := true
		if tm != nil {
			if quiet, err = tm.Quiet(ctx); err != nil {
				break
			}
			// Idle notifications come as one digest with the lead's next
			// input, or on their own once the whole team is quiet.
			if (lead.Pending() > 0 && !digestQuiet) || (quiet && !active) {
				if d := tm.TakeDigest(); d != "" {
					lead.Send(d)
				}
			}
		}
		if lead.Pending() > 0 {
			again()
			continue
		}
		if (!active && quiet) || s.cfg.Interactive {
			// Done, unless a prompt came in (Submit) since the look at
			// Pending above.
			if total, err, ended := s.endRun(ctx, total, err, start, resubmit, true); ended {
				return total, err
			}
			continue
		}
		if err = s.wait(ctx, tm); err != nil {
			break
		}
	}
	total, err, _ = s.endRun(ctx, total, err, start, resubmit, false)
	return total, err
}

// turn runs one model turn of st's agent, recording what Background needs.
// An Interrupt that came since the run began (between its turns, or
// before the first) ends it here, before the model is called.
func (s *Session) turn(ctx context.Context, st *seat, prompt string) (agent.Result, error) {
	base := st.ag.Messages()
	s.mu.Lock()
	if st.halt {
		// The prompt of a turn interrupted before it began is dropped,
		// as one interrupted at once would be answered by nothing.
		st.halt = false
		s.mu.Unlock()
		return agent.Result{Interrupted: true}, nil
	}
	st.inTurn, st.base, st.prompt = true, base, prompt
	s.mu.Unlock()
	res, err := st.ag.Run(ctx, prompt)
	s.mu.Lock()
	st.inTurn, st.base = false, nil
	s.releaseLocked() // schedule.go: firings that came due during the turn
	s.mu.Unlock()
	return res, err
}

// endRun ends a foreground run: the team's problems, the end event, and
// another run for input that came as this one ended. With ifIdle, it
// ends the run only when no input waits (ended false: the run goes on).
// The look at the input, the end and its event are one step under s.mu,
// the lock Submit sends to a running lead under: a prompt is either seen
// here or starts a run of its own, whose start is reported after this
// end.
func (s *Session) endRun(ctx context.Context, total agent.Result, err error, start time.Time, resubmit, ifIdle bool) (_ agent.Result, _ error, ended bool) {
	total.Duration = s.cfg.Now().Sub(start)
	if tm := s.Team(); err == nil && tm != nil {
		// A clean end means the team ended as the lead intended.
		if ps := tm.Problems(); len(ps) > 0 {
			err = fmt.Errorf("the team did not end cleanly: %s", strings.Join(ps, "; "))
		}
	}
	s.mu.Lock()
	pending := s.seat.ag.Pending() > 0
	if ifIdle && pending {
		s.mu.Unlock()
		return total, err, false
	}
	// Not running from here: what was sent meanwhile is run again
	// (Submit's runs) or left for the next run, which Serve starts.
	s.running = false
	s.ended = !s.cfg.Interactive // peer.go: a headless run reads no more
	again := resubmit && pending && !s.closed
	if again {
		s.runs.Add(1)
	}
	s.publish(Event{Kind: KindTurnEnded, Result: &total, Err: err})
	s.mu.Unlock()
	switch {
	case again:
		go func() {
			defer s.runs.Done()
			_, _ = s.run(ctx, "", true)
		}()
	case pending:
		s.signal()
	}
	return total, err, true
}

// signal wakes a run waiting for input, or Serve.
func (s *Session) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// wait waits for a task event, input from the team, or a change in the
// team. The lead is woken by the stores' watches of the team file and the
// task list (a teammate's last step, marking itself idle in the team file,
// reaches it through no inbox); it still looks again every 30 s, for the
// one thing no store tells (a Claude Code teammate silent past
// swarm.DefaultReplyTimeout), and every second when the stores cannot
// watch.
func (s *Session) wait(ctx context.Context, tm *swarm.Lead) error {
	if tm == nil {
		// Input delivered meanwhile (another session's message, peer.go;
		// a firing of the schedule, Scheduled) signals s.wake.
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-s.wake:
			case <-wctx.Done():
			}
			cancel()
		}()
		err := s.sub.Wait(wctx)
		switch {
		case err == nil:
			s.take() // none when another reader took it: the run looks again
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case wctx.Err() != nil:
			return nil // woken: the run looks again
		}
		return ctx.Err()
	}
	look := 30 * time.Second
	if !tm.Watching() {
		look = time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, look)
	defer cancel()
	go func() {
		select {
		case <-s.wake:
		case <-tm.Changed():
		case <-wctx.Done():
		}
		cancel()
	}()
	if err := s.sub.Wait(wctx); err == nil {
		s.take()
		return nil
	}
	return ctx.Err()
}

// Submit gives the lead a prompt without waiting: a new run when it is
// idle (its end is a KindTurnEnded event), or input at its next tool-round
// boundary when it is working.
// After Close it does nothing (a KindError event would reach no one).
func (s *Session) Submit(ctx context.Context, prompt string) {
	s.mu.Lock()
	lead, busy := s.lead, s.running
	if s.closed {
		s.mu.Unlock()
		return
	}
	if busy && lead != nil {
		lead.Send(prompt) // under s.mu: a run cannot end between the look and the send
		s.mu.Unlock()
		s.signal() // a run waiting on background work takes it now
		return
	}
	s.runs.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.runs.Done()
		_, _ = s.run(ctx, prompt, true) // busy meanwhile: the other run takes the prompt
	}()
}

// Interrupt aborts the lead's current turn, and the run it belongs to:
// one that comes between two turns of a run (or before its first) stops
// the next from starting. The session stays usable. It reports whether
// the lead was working.
func (s *Session) Interrupt() bool {
	s.mu.Lock()
	lead, st, running := s.lead, s.seat, s.running
	if running && st != nil {
		st.halt = true
	}
	s.mu.Unlock()
	hit := lead != nil && lead.Interrupt()
	return hit || running
}

// halted reports whether an Interrupt came for st's run, and forgets it.
func (s *Session) halted(st *seat) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := st.halt
	st.halt = false
	return h
}

// Stop stops a background task by id and returns its final state.
func (s *Session) Stop(ctx context.Context, id string) (task.State, error) {
	return s.reg.Stop(ctx, task.ID(id))
}

// SendTo sends a person's message to a teammate, from the lead's seat:
// the teammate gets it at its next tool-round boundary, or as its next
// prompt (swarm.Lead.Tell, which puts it on the timeline).
func (s *Session) SendTo(ctx context.Context, teammate, text string) error {
	tm := s.Team()
	if tm == nil {
		return errors.New("session: there is no team to send to")
	}
	return tm.Tell(ctx, teammate, text)
}

// InterruptTeammate aborts a teammate's current turn; it stays in the
// team and takes its next message or task. It reports whether a turn was
// running.
func (s *Session) InterruptTeammate(teammate string) (bool, error) {
	tm := s.Team()
	if tm == nil {
		return false, errors.New("session: there is no team")
	}
	return tm.InterruptMate(teammate)
}

// Close waits for the runs Submit started and ends every subscription;
// from then on no run starts (Run returns ErrClosed, Submit does
// nothing) and a new subscription is closed at once. It does not close
// the registry or the team: their owner does.
func (s *Session) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.runs.Wait()
	s.sub.Close()
	s.bus.close()
}

// SystemNotification wraps a task notification so that the model tells it
// from user input.
func SystemNotification(n string) string {
	return "<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT] A background task you started has changed state. This is not a message from the user; act on it as part of your own work.\n" +
		n + "\n</system-reminder>"
}
