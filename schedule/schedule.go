// Package schedule is a session's input by the clock: cron jobs
// (CronCreate, CronList, CronDelete: 5-field expressions in local time,
// recurring or one-shot, at most MaxJobs a session) and the one pending
// wakeup of a self-paced /loop (ScheduleWakeup: a delay of MinDelay to
// MaxDelay). docs/schedule.md describes them.
//
// A Schedule is safe for concurrent use. Its one goroutine (Start, ended
// by Close) waits with the standard library's timers, so tests run it
// on virtual time inside a testing/synctest bubble; Config.Now stamps
// jobs. When something is due it calls Config.Fire, never with a lock
// held, in the order the firings were due; the session decides when the
// firing reaches the model (at a turn boundary). Every change of the
// state (a job created, deleted or fired, the wakeup set or spent) is
// handed whole to Config.Save, in order, so a session record can keep
// it and a resumed session restore it (New's State).
package schedule

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds of a schedule.
const (
	MaxJobs  = 50               // cron jobs a session may hold
	MinDelay = 60 * time.Second // the shortest ScheduleWakeup delay
	MaxDelay = time.Hour        // the longest
	// MaxAge is how long a recurring job lives: at that age it fires a
	// last time and is deleted, as in Claude Code, so a forgotten job
	// does not run forever.
	MaxAge = 7 * 24 * time.Hour
)

// Errors a schedule returns.
var (
	ErrTooMany  = fmt.Errorf("schedule: a session holds at most %d cron jobs", MaxJobs)
	ErrNotFound = errors.New("schedule: no such job")
	ErrClosed   = errors.New("schedule: closed")
)

// Job is one cron job.
type Job struct {
	ID        string    `json:"id"`
	Cron      string    `json:"cron"`
	Prompt    string    `json:"prompt"`
	Recurring bool      `json:"recurring"`
	Created   time.Time `json:"created"`
	// Last is when the job last fired (zero: never); its next time is
	// the first after Last, or after Created, that Cron matches.
	Last time.Time `json:"last,omitzero"`
}

// Wakeup is the pending ScheduleWakeup: its prompt fires at At.
type Wakeup struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason,omitempty"`
	Prompt string    `json:"prompt"`
	Set    time.Time `json:"set"`
}

// State is everything a schedule holds: what a session record keeps.
type State struct {
	Jobs   []Job   `json:"jobs,omitempty"`
	Wakeup *Wakeup `json:"wakeup,omitempty"`
}

// clone returns a deep copy of st.
func (st State) clone() State {
	c := State{Jobs: slices.Clone(st.Jobs)}
	if st.Wakeup != nil {
		w := *st.Wakeup
		c.Wakeup = &w
	}
	return c
}

// Config sets up a Schedule.
type Config struct {
	// Now stamps jobs and decides what is due; time.Now by default.
	Now func() time.Time
	// Fire hands a firing to the session. Required.
	Fire func(Firing)
	// Save, when set, receives the whole state after each change.
	Save func(State)
	// MinDelay is the shortest ScheduleWakeup delay; MinDelay by
	// default. Only tests lower it (cmd/troupe reads the test-only
	// TROUPE_TEST_WAKEUP_MIN).
	MinDelay time.Duration
	// MaxFirings, when positive, ends the schedule after that many
	// firings (troupe -p --max-wakeups): nothing fires any more and
	// Pending reports false; the state is kept.
	MaxFirings int
	// NewID returns a job id; 8 random hex digits by default.
	NewID func() string
}

// Schedule is a session's cron jobs and wakeup.
type Schedule struct {
	cfg  Config
	kick chan struct{} // 1-slot: the state changed, look at the timer again

	// mu guards the fields below it.
	mu      sync.Mutex
	st      State
	fired   int
	started bool
	closed  bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	// saveMu keeps Save's calls in the order of the changes.
	saveMu sync.Mutex
}

// New returns a schedule holding st (a resumed session's; the zero State
// for a new one). Nothing fires before Start.
func New(cfg Config, st State) (*Schedule, error) {
	if cfg.Fire == nil {
		return nil, errors.New("schedule: no Fire function")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MinDelay <= 0 {
		cfg.MinDelay = MinDelay
	}
	if cfg.NewID == nil {
		cfg.NewID = randomID
	}
	return &Schedule{cfg: cfg, kick: make(chan struct{}, 1), st: st.clone()}, nil
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Start starts the goroutine that fires what is due, until ctx ends or
// Close. What came due while the session was down fires at once.
func (s *Schedule) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.started {
		return nil
	}
	s.started = true
	ctx, s.cancel = context.WithCancel(ctx)
	s.wg.Go(func() { s.loop(ctx) })
	return nil
}

// Close stops the goroutine and waits for it; the state is kept.
// Calls after Close that change the state return ErrClosed.
func (s *Schedule) Close() {
	s.mu.Lock()
	s.closed = true
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
}

// loop fires what is due and sleeps until the next time or a change.
func (s *Schedule) loop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := s.cfg.Now()
		s.mu.Lock()
		var fs []Firing
		if !s.spentLocked() {
			var after State
			fs, after = Due(s.st, now)
			if m := s.cfg.MaxFirings; m > 0 && s.fired+len(fs) > m {
				fs = fs[:m-s.fired]
				after = unfire(s.st, after, fs)
			}
			s.st = after
			s.fired += len(fs)
		}
		at, spent := Next(s.st), s.spentLocked()
		st := s.st.clone()
		s.mu.Unlock()
		for _, f := range fs {
			s.cfg.Fire(f)
		}
		if len(fs) > 0 {
			s.save(st)
		}
		var wait <-chan time.Time
		if !at.IsZero() && !spent {
			timer.Reset(max(at.Sub(s.cfg.Now()), 0))
			wait = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-wait:
		}
	}
}

// spentLocked reports whether MaxFirings were fired. s.mu is held.
func (s *Schedule) spentLocked() bool {
	return s.cfg.MaxFirings > 0 && s.fired >= s.cfg.MaxFirings
}

// changed saves st and wakes the loop.
func (s *Schedule) changed(st State) {
	s.save(st)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Schedule) save(st State) {
	if s.cfg.Save == nil {
		return
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.cfg.Save(st)
}

// Create adds a cron job: expr is a 5-field expression in local time
// (Parse), prompt what fires; a job that is not recurring fires once and
// goes. It fails with ErrTooMany at MaxJobs jobs, and names the problem
// of an expression that does not parse or never matches.
func (s *Schedule) Create(expr, prompt string, recurring bool) (Job, error) {
	expr = strings.Join(strings.Fields(expr), " ")
	if _, err := Parse(expr); err != nil {
		return Job{}, err
	}
	if strings.TrimSpace(prompt) == "" {
		return Job{}, errors.New("schedule: the prompt is empty")
	}
	now := s.cfg.Now()
	if next(expr, now).IsZero() {
		return Job{}, fmt.Errorf("cron expression %q: it never matches a date", expr)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Job{}, ErrClosed
	}
	if len(s.st.Jobs) >= MaxJobs {
		s.mu.Unlock()
		return Job{}, ErrTooMany
	}
	j := Job{ID: s.cfg.NewID(), Cron: expr, Prompt: prompt, Recurring: recurring, Created: now}
	s.st.Jobs = append(s.st.Jobs, j)
	st := s.st.clone()
	s.mu.Unlock()
	s.changed(st)
	return j, nil
}

// Delete removes the job id; ErrNotFound when there is none.
func (s *Schedule) Delete(id string) (Job, error) {
	s.mu.Lock()
	i := slices.IndexFunc(s.st.Jobs, func(j Job) bool { return j.ID == id })
	if s.closed {
		s.mu.Unlock()
		return Job{}, ErrClosed
	}
	if i < 0 {
		s.mu.Unlock()
		return Job{}, fmt.Errorf("delete %q: %w", id, ErrNotFound)
	}
	j := s.st.Jobs[i]
	s.st.Jobs = slices.Delete(s.st.Jobs, i, i+1)
	st := s.st.clone()
	s.mu.Unlock()
	s.changed(st)
	return j, nil
}

// Wake sets the wakeup, replacing a pending one: prompt fires after
// delay, which must be within [Config.MinDelay, MaxDelay].
func (s *Schedule) Wake(delay time.Duration, reason, prompt string) (Wakeup, error) {
	if delay < s.cfg.MinDelay || delay > MaxDelay {
		return Wakeup{}, fmt.Errorf("delay %s: want %d to %d seconds", delay, int(s.cfg.MinDelay/time.Second), int(MaxDelay/time.Second))
	}
	if strings.TrimSpace(prompt) == "" {
		return Wakeup{}, errors.New("schedule: the prompt is empty")
	}
	now := s.cfg.Now()
	w := Wakeup{At: now.Add(delay), Reason: reason, Prompt: prompt, Set: now}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Wakeup{}, ErrClosed
	}
	s.st.Wakeup = &w
	st := s.st.clone()
	s.mu.Unlock()
	s.changed(st)
	return w, nil
}

// CancelWakeup cancels the pending wakeup (the end of a self-paced
// /loop) and returns it; false when none was pending.
func (s *Schedule) CancelWakeup() (Wakeup, bool) {
	s.mu.Lock()
	w := s.st.Wakeup
	if w == nil || s.closed {
		s.mu.Unlock()
		return Wakeup{}, false
	}
	s.st.Wakeup = nil
	st := s.st.clone()
	s.mu.Unlock()
	s.changed(st)
	return *w, true
}

// Clear deletes every job and the wakeup (/loop stop); it returns how
// many jobs went and whether a wakeup did.
func (s *Schedule) Clear() (jobs int, wakeup bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, false
	}
	jobs, wakeup = len(s.st.Jobs), s.st.Wakeup != nil
	s.st = State{}
	s.mu.Unlock()
	s.changed(State{})
	return jobs, wakeup
}

// List returns the jobs, oldest first.
func (s *Schedule) List() []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.Jobs)
}

// State returns a copy of everything the schedule holds.
func (s *Schedule) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.clone()
}

// Next returns when the next firing is due; false when nothing will
// fire (nothing scheduled, or MaxFirings reached).
func (s *Schedule) Next() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spentLocked() {
		return time.Time{}, false
	}
	t := Next(s.st)
	return t, !t.IsZero()
}

// Pending reports whether something is still to fire: a headless run
// stays up while it is true.
func (s *Schedule) Pending() bool {
	_, ok := s.Next()
	return ok
}

// Fired returns how many firings the schedule made.
func (s *Schedule) Fired() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fired
}
