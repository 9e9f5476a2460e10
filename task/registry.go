package task

import (
	"context"
	"fmt"
	"github.com/troupe-dev/troupe/internal/fifo"
	"slices"
	"sync"
	"time"
)

// Defaults for Config.
const (
	DefaultMaxOutput     int64 = 256 << 20 // 256 MiB, the end kept (Output)
	DefaultGrace               = 30 * time.Second
	DefaultPollInterval        = time.Second
	DefaultStallInterval       = 5 * time.Second
	DefaultStallAfter          = 45 * time.Second
	DefaultMaxPollRead   int64 = 1 << 20
)

// KillFunc stops a running task. For a shell it kills the process group.
type KillFunc func(ctx context.Context, s State) error

// Config sets up a Registry. Zero fields take their defaults.
type Config struct {
	// Dir is the folder of output files (see OutputDir); required to start
	// shells.
	Dir string
	// MaxOutput caps each output file (default 256 MiB); past it the
	// file keeps its end (see Output).
	MaxOutput int64
	// Grace is how long a terminal, notified task stays before eviction,
	// which removes its output file (default 30 s, on Clock).
	Grace time.Duration
	// PollInterval is the period of the poll loop; negative disables the
	// loop (Poll can still be called directly).
	PollInterval time.Duration
	// MaxPollRead bounds the output one Poll reads per task.
	MaxPollRead int64
	// StallInterval and StallAfter drive the shell stall watchdog.
	StallInterval, StallAfter time.Duration
	// Kill holds the kill function of each task type; a kill function given
	// to Register takes precedence for its task.
	Kill map[Type]KillFunc
	// Shell runs shell commands with -c (default "bash").
	Shell string
	Clock Clock
}

// Registry holds every task of a session.
type Registry struct {
	cfg   Config
	clock Clock
	wg    sync.WaitGroup
	ctx   context.Context // lifecycle; canceled by Close
	stop  context.CancelCauseFunc

	// mu guards the fields below. Held only for map work and queueing
	// events (Subscription.push never blocks); never across I/O or kills.
	mu       sync.Mutex
	closed   bool
	tasks    map[ID]State
	kills    map[ID]KillFunc
	stopping map[ID]bool // Stop is killing it: its own end must stay silent
	// runs holds, for a task run by Go, the run that owns it now: a task
	// that is stopped and run again (a resumed agent) keeps its id, and the
	// stopped run's goroutine must not finish the new run.
	runs map[ID]chan struct{}
	// evicted holds the last state of each evicted task, so that a look
	// for it can say it ended and its output was given back.
	evicted map[ID]State
	subs    []*Subscription

	testHookPollRead func() // tests: runs between Poll's reads and its apply
}

// New returns a registry and starts its poll loop.
func New(cfg Config) *Registry {
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.MaxPollRead <= 0 {
		cfg.MaxPollRead = DefaultMaxPollRead
	}
	if cfg.StallInterval <= 0 {
		cfg.StallInterval = DefaultStallInterval
	}
	if cfg.StallAfter <= 0 {
		cfg.StallAfter = DefaultStallAfter
	}
	if cfg.Shell == "" {
		cfg.Shell = "bash"
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	ctx, stop := context.WithCancelCause(context.Background())
	r := &Registry{
		cfg: cfg, clock: cfg.Clock, ctx: ctx, stop: stop,
		tasks: map[ID]State{}, kills: map[ID]KillFunc{}, stopping: map[ID]bool{}, runs: map[ID]chan struct{}{},
		evicted: map[ID]State{},
	}
	if cfg.PollInterval > 0 {
		r.goFunc(r.pollLoop)
	}
	return r
}

// goFunc runs f until Close; it reports false once shutdown has begun.
func (r *Registry) goFunc(f func(ctx context.Context)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.wg.Go(func() { f(r.ctx) })
	return true
}

// Close kills the running tasks that have a kill function (shells among
// them: no orphan survives), stops every goroutine of the registry and
// waits for them, or for ctx. It is idempotent.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	already := r.closed
	r.closed = true
	var active []ID
	for id, s := range r.tasks {
		if s.Status.Active() {
			active = append(active, id)
		}
	}
	r.mu.Unlock()
	if !already {
		for _, id := range active {
			r.stop1(ctx, id) // errors: the task ends anyway; nothing to report to
		}
	}
	r.stop(ErrClosed)
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("close task registry: %w", context.Cause(ctx))
	}
	r.mu.Lock()
	subs := r.subs
	r.subs = nil
	r.mu.Unlock()
	for _, s := range subs {
		s.closeQueue()
	}
	return nil
}

// Subscribe returns a subscription to every later event.
func (r *Registry) Subscribe() *Subscription {
	s := &Subscription{r: r, q: fifo.New[Event]()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		s.q.Close()
		return s
	}
	r.subs = append(r.subs, s)
	return s
}

// Follow calls f with every later event, in order, on a goroutine of its
// own, until the registry closes or the returned stop is called; stop
// returns once f has returned for the last time.
func (r *Registry) Follow(f func(Event)) (stop func()) {
	sub := r.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			e, err := sub.Next(context.Background())
			if err != nil {
				return
			}
			f(e)
		}
	}()
	return func() {
		sub.Close()
		<-done
	}
}

func (r *Registry) unsubscribe(s *Subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs = slices.DeleteFunc(r.subs, func(x *Subscription) bool { return x == s })
}

// emitLocked queues e for every subscriber, in order.
func (r *Registry) emitLocked(e Event) {
	for _, s := range r.subs {
		s.push(e)
	}
}

// Register adds s, or re-registers it (a resume) when its id exists: then
// s replaces the stored state, which may restart a finished task (a resumed
// agent runs again and will be notified again), but the UI-side state of
// the existing task is kept (Retain, Start and, through Resumer, the
// detail's messages, pending messages and disk-loaded flag). An empty ID gets a
// fresh one, a zero Start the clock's time, an empty Status pending. kill,
// when not nil, is the task's own kill function. It returns the stored
// state.
func (r *Registry) Register(s State, kill KillFunc) (State, error) {
	if !s.Type.Valid() {
		return State{}, fmt.Errorf("register task: %w: unknown type %q", ErrBadDetail, s.Type)
	}
	if err := checkDetail(s.Type, s.Detail); err != nil {
		return State{}, fmt.Errorf("register task: %w", err)
	}
	if s.ID == "" {
		s.ID = NewID(s.Type)
	}
	if s.Status == "" {
		s.Status = Pending
	}
	if s.Start.IsZero() {
		s.Start = r.clock.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return State{}, ErrClosed
	}
	kind := EventRegistered
	wasRunning := false
	if prev, ok := r.tasks[s.ID]; ok {
		wasRunning = prev.Status == Running
		if prev.Type != s.Type {
			return State{}, fmt.Errorf("register task %s: %w", s.ID, ErrExists)
		}
		s.Retain, s.Start = prev.Retain, prev.Start
		if rs, ok := s.Detail.(Resumer); ok && prev.Detail != nil {
			s.Detail = rs.Resume(prev.Detail)
		}
		kind = EventUpdated
	}
	r.tasks[s.ID] = s
	delete(r.evicted, s.ID) // registered again: a task once more
	if kill != nil {
		r.kills[s.ID] = kill
	}
	r.emitLocked(Event{Kind: kind, State: s})
	if s.Status == Running && !wasRunning {
		r.emitLocked(Event{Kind: EventStarted, State: s})
	}
	return s, nil
}

// Get returns the task with id.
func (r *Registry) Get(id ID) (State, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.tasks[id]
	return s, ok
}

// Evicted returns the last state of task id, without its Detail, if it
// was evicted (it ended, its notification went out, the grace period
// passed, and its output file was removed).
func (r *Registry) Evicted(id ID) (State, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.evicted[id]
	return s, ok
}

// ownsOutput reports whether s's output file is one the registry made (in
// Config.Dir, named after s), and so one eviction removes.
func (r *Registry) ownsOutput(s State) bool {
	return r.cfg.Dir != "" && s.OutputFile != "" && s.OutputFile == OutputPath(r.cfg.Dir, s.ID)
}

// List returns every task, oldest first.
func (r *Registry) List() []State {
	r.mu.Lock()
	out := make([]State, 0, len(r.tasks))
	for _, s := range r.tasks {
		out = append(out, s)
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b State) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return cmpString(string(a.ID), string(b.ID))
	})
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Update applies f to the task with id, under the registry's lock (f must
// be quick and must not call the registry). When f returns its input
// unchanged, nothing happens and no subscriber wakes. A status change is
// checked by CheckTransition (a refusal leaves the task as it was); id,
// type and a detail of the wrong type are refused too. Entering running
// emits EventStarted; any other change EventUpdated. Update never notifies:
// see Finish and Notify.
func (r *Registry) Update(id ID, f func(State) State) (State, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.updateLocked(id, f)
}

func (r *Registry) updateLocked(id ID, f func(State) State) (State, error) {
	old, ok := r.tasks[id]
	if !ok {
		return State{}, fmt.Errorf("update task %s: %w", id, ErrNotFound)
	}
	next := f(old)
	if next == old {
		return old, nil
	}
	if next.ID != old.ID || next.Type != old.Type {
		return old, fmt.Errorf("update task %s: %w: id or type changed", id, ErrBadDetail)
	}
	if next.Detail != old.Detail {
		if err := checkDetail(next.Type, next.Detail); err != nil {
			return old, fmt.Errorf("update task %s: %w", id, err)
		}
	}
	if err := CheckTransition(old.Status, next.Status); err != nil {
		err.(*TransitionError).ID = id
		return old, err
	}
	if next.Status.Terminal() && !old.Status.Terminal() && next.End.IsZero() {
		next.End = r.clock.Now()
	}
	if next.Status.Terminal() && next.Notified && next.EvictAfter.IsZero() {
		// Marked notified by hand: arm the grace period all the same.
		next.EvictAfter = r.clock.Now().Add(r.cfg.Grace)
	}
	r.tasks[id] = next
	kind := EventUpdated
	if next.Status == Running && old.Status != Running {
		kind = EventStarted
	}
	r.emitLocked(Event{Kind: kind, State: next})
	return next, nil
}

// Finish moves the task to terminal status to, after applying f (which may
// be nil) to record its outcome, then notifies (see Notify). A task already
// terminal is left alone and Finish returns a TransitionError wrapping
// ErrTerminal. It returns the stored state.
func (r *Registry) Finish(id ID, to Status, f func(State) State) (State, error) {
	return r.finish(id, to, f, false)
}

// FinishQuietly is Finish for a task whose owner tells the model about
// its end itself (a teammate's end reaches the lead through its team): the
// terminal event is emitted without a notification for the model.
func (r *Registry) FinishQuietly(id ID, to Status, f func(State) State) (State, error) {
	return r.finish(id, to, f, true)
}

// finish is Finish; silent suppresses the model's notification (a stop).
func (r *Registry) finish(id ID, to Status, f func(State) State, silent bool) (State, error) {
	if !to.Terminal() {
		return State{}, fmt.Errorf("finish task %s: %w: %s is not terminal", id, ErrTransition, to)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping[id] {
		// Stop is killing it: the task's own end meanwhile (its shell
		// exiting on the signal, a remote job's result for the cancel) is
		// the stop's, not a failure or a completion of its own.
		to = Killed
	}
	s, err := r.updateLocked(id, func(s State) State {
		if s.Status.Terminal() {
			return s
		}
		if f != nil {
			s = f(s)
		}
		s.Status = to
		return s
	})
	if err != nil {
		return s, err
	}
	if s.Status != to {
		return s, &TransitionError{ID: id, From: s.Status, To: to, Err: ErrTerminal}
	}
	if r.stopping[id] {
		silent = true // stopped on purpose; the stopper tells the model
	}
	if s.Type == Dream {
		silent = true // a dream is housekeeping: the task list and the UI show it, the model is not told
	}
	delete(r.kills, id)
	delete(r.stopping, id)
	s, _ = r.notifyLocked(id, silent)
	return s, nil
}

// Notify sends the completion notification of a terminal task once: it
// atomically sets Notified and, if it was the one to set it, emits
// EventTerminated with the <task-notification> for the model and arms the
// eviction grace period. It reports whether it sent it.
func (r *Registry) Notify(id ID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.notifyLocked(id, false)
	return ok
}

// notifyLocked is Notify; silent leaves the model's text out.
func (r *Registry) notifyLocked(id ID, silent bool) (State, bool) {
	s, ok := r.tasks[id]
	if !ok || s.Notified || !s.Status.Terminal() {
		return s, false
	}
	s.Notified = true
	s.EvictAfter = r.clock.Now().Add(r.cfg.Grace)
	r.tasks[id] = s
	n := NotificationFor(s)
	e := Event{Kind: EventTerminated, State: s, Summary: n.Summary}
	if !silent {
		e.Notification = n.XML()
	}
	r.emitLocked(e)
	return s, true
}

// Stop stops a pending or running task: it kills it through its kill
// function (its own, else its type's), marks it killed and notified. The
// model gets no notification of it (the stopper reports the stop), and a
// shell killed this way does not report its exit code 137 either; the
// stream-json EventTerminated is still emitted. It fails with ErrNotFound
// or ErrNotRunning.
func (r *Registry) Stop(ctx context.Context, id ID) (State, error) {
	return r.stop1(ctx, id)
}

func (r *Registry) stop1(ctx context.Context, id ID) (State, error) {
	r.mu.Lock()
	s, ok := r.tasks[id]
	if !ok {
		r.mu.Unlock()
		return State{}, fmt.Errorf("stop task %s: %w", id, ErrNotFound)
	}
	if !s.Status.Active() {
		r.mu.Unlock()
		return s, fmt.Errorf("stop task %s: %w (%s)", id, ErrNotRunning, s.Status)
	}
	kill := r.kills[id]
	if kill == nil {
		kill = r.cfg.Kill[s.Type]
	}
	r.stopping[id] = true
	r.mu.Unlock()
	if kill != nil {
		if err := kill(ctx, s); err != nil {
			// It may still run: do not claim it was killed.
			r.mu.Lock()
			delete(r.stopping, id)
			cur := r.tasks[id]
			r.mu.Unlock()
			return cur, fmt.Errorf("stop task %s: %w", id, err)
		}
	}
	st, err := r.finish(id, Killed, func(s State) State {
		if sh, ok := s.Detail.(*Shell); ok {
			s.Detail = sh.With(func(c *Shell) { c.Interrupted = true })
		}
		return s
	}, true)
	if err != nil {
		// It ended on its own meanwhile (and was notified as such).
		return st, fmt.Errorf("stop task %s: %w (%s)", id, ErrNotRunning, st.Status)
	}
	return st, nil
}

// KillForAgent stops every active shell and monitor started by agentID
// (the agent is exiting: none of its shells or watches may outlive it).
// It returns the ids stopped.
func (r *Registry) KillForAgent(ctx context.Context, agentID string) []ID {
	r.mu.Lock()
	var ids []ID
	for id, s := range r.tasks {
		if !s.Status.Active() {
			continue
		}
		switch d := s.Detail.(type) {
		case *Shell:
			if d.AgentID == agentID {
				ids = append(ids, id)
			}
		case *Monitor:
			if d.AgentID == agentID {
				ids = append(ids, id)
			}
		}
	}
	r.mu.Unlock()
	var out []ID
	for _, id := range ids {
		if _, err := r.stop1(ctx, id); err == nil {
			out = append(out, id)
		}
	}
	return out
}
