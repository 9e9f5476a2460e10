package workflow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// Defaults of Options.
const (
	DefaultConcurrency = 4
	DefaultMaxAgents   = 50
	DefaultMaxBusy     = 10 * time.Second
)

// Errors.
var (
	// ErrBudget is wrapped by Run's error when the script failed after
	// Options.Budget refused an agent() call.
	ErrBudget = errors.New("workflow: budget")
	// ErrBusy is wrapped by Run's error when the script ran JavaScript
	// longer than Options.MaxBusy without waiting on anything.
	ErrBusy = errors.New("workflow: script ran too long without yielding")
	// ErrStuck is wrapped by Run's error when the script waits on a
	// promise that nothing can settle.
	ErrStuck = errors.New("workflow: script waits on a promise nothing will settle")
)

// Options configure Run. Zero fields take their defaults.
type Options struct {
	// Concurrency bounds the agents running at once (DefaultConcurrency).
	Concurrency int
	// MaxAgents bounds the agent() calls of a run (DefaultMaxAgents); a
	// call beyond it rejects.
	MaxAgents int
	// MaxBusy is how long one stretch of JavaScript may run without
	// waiting on an agent, a sleep or a promise (DefaultMaxBusy).
	MaxBusy time.Duration
	// Budget, when set, is asked before each agent() call that would run
	// an agent; an error rejects the call with "budget: " and the error.
	Budget func() error
	// Cache holds the journal of an earlier run of the same script: calls
	// are answered from it positionally (see the package doc).
	Cache []Entry
	// Record, when set, gets each agent() call once it settled, on the
	// loop goroutine (see Journal).
	Record func(Entry)
	// Observer, when set, gets the run's events, in order, on the loop
	// goroutine; it must not block.
	Observer func(Event)
}

// Result is what a run produced.
type Result struct {
	// Value is the script's return value as JSON ("null" for none).
	Value json.RawMessage
	// Agents counts the agent() calls, Cached those answered from the
	// cache, Failed those that rejected.
	Agents, Cached, Failed int
	Usage                  Usage
}

// ScriptError is a script that threw, or whose promise rejected; Stack
// is JavaScript's, whose lines are the script's.
type ScriptError struct {
	Message string
	Stack   string
	budget  bool
}

// Error implements error.
func (e *ScriptError) Error() string {
	if e.Stack != "" && strings.Contains(e.Stack, "\n") {
		return "workflow script failed: " + e.Stack
	}
	return "workflow script failed: " + e.Message
}

// Unwrap returns ErrBudget for a script that failed after a budget
// refusal.
func (e *ScriptError) Unwrap() error {
	if e.budget {
		return ErrBudget
	}
	return nil
}

// EventKind names an Event.
type EventKind string

// Event kinds.
const (
	EventQueued   EventKind = "agent_queued"   // an agent() call waits for a slot
	EventStarted  EventKind = "agent_started"  // it runs
	EventActivity EventKind = "agent_activity" // its progress
	EventDone     EventKind = "agent_done"     // it resolved
	EventFailed   EventKind = "agent_failed"   // it rejected
	EventLog      EventKind = "log"            // log(...)
	EventPhase    EventKind = "phase"          // phase(title)
)

// Event is one step of a run.
type Event struct {
	Kind   EventKind
	Index  int // the agent() call's position; -1 for log and phase
	Label  string
	Phase  string
	Text   string // log line, activity, phase title or result excerpt
	Err    string
	Usage  Usage
	Tokens int64 // activity: total so far
	Cached bool  // answered from the cache
	// AgentID is the agent's id (activity), which names its transcript.
	AgentID string
}

// Digest returns the digest of an agent() call: its prompt and options
// as canonical JSON (object keys sorted).
func Digest(prompt string, opts json.RawMessage) string {
	var v any
	canon := []byte("null")
	if len(opts) > 0 && json.Unmarshal(opts, &v) == nil {
		canon, _ = json.Marshal(v) // maps marshal with sorted keys
	}
	h := sha256.New()
	h.Write([]byte(prompt))
	h.Write([]byte{0})
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil))
}

// scope is where an agent() call belongs: parallel() gives each of its
// functions one, which failFast cancels.
type scope struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// tracker follows the current scope through promise callbacks
// (goja.AsyncContextTracker).
type tracker struct{ cur *scope }

func (t *tracker) Grab() any            { return t.cur }
func (t *tracker) Resumed(o any)        { t.cur, _ = o.(*scope) }
func (t *tracker) Exited()              { t.cur = nil }
func (t *tracker) swap(s *scope) *scope { p := t.cur; t.cur = s; return p }

// run is one Run: its VM and loop.
type run struct {
	script *Script
	opts   Options
	runner Runner
	vm     *goja.Runtime
	track  *tracker
	root   *scope
	sem    chan struct{}
	busy   atomic.Int64 // unix nanos when the current VM entry began; 0 outside

	// mu guards q; kick wakes the loop.
	mu   sync.Mutex
	q    []func()
	kick chan struct{}
	wg   sync.WaitGroup // agent and sleep goroutines

	// Loop-goroutine state.
	outstanding int
	fatal       error
	calls       int
	replaying   bool
	cache       map[int]Entry
	// held are cached answers waiting for their turn: a resume settles
	// them in the order the earlier run did (Entry.Seq), so that a script
	// whose later calls depend on which finished first (a pipeline) makes
	// them in the same order again.
	held      map[int]func()
	nextSeq   int
	phase     string
	budgeted  bool
	res       Result
	jsonParse goja.Callable
	stringify goja.Callable
}

// Run runs script with args (its `args`, verbatim JSON; nil for none),
// each agent() call through runner, until the script's promise settles
// and every agent it started returned. It returns the script's value, or
// a *ScriptError (wrapping ErrBudget when a budget refusal preceded it),
// an error wrapping ErrBusy or ErrStuck, or ctx's cause.
func Run(ctx context.Context, script *Script, args json.RawMessage, runner Runner, opts Options) (Result, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.MaxAgents <= 0 {
		opts.MaxAgents = DefaultMaxAgents
	}
	if opts.MaxBusy <= 0 {
		opts.MaxBusy = DefaultMaxBusy
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &run{script: script, opts: opts, runner: runner, vm: goja.New(), track: &tracker{},
		root: &scope{ctx: rctx, cancel: cancel}, sem: make(chan struct{}, opts.Concurrency),
		kick: make(chan struct{}, 1), replaying: len(opts.Cache) > 0, cache: map[int]Entry{}, held: map[int]func(){}}
	for _, e := range opts.Cache {
		r.cache[e.Index] = e
	}
	r.vm.SetAsyncContextTracker(r.track)
	stopWatch := r.watchdog()
	defer stopWatch()
	err := r.main(ctx, args) // ctx: a stop from outside, not the run's own end
	cancel(errors.New("workflow run over"))
	r.wg.Wait()
	return r.res, err
}

// watchdog interrupts the VM when one entry runs longer than MaxBusy.
func (r *run) watchdog() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	tick := r.opts.MaxBusy / 4
	if tick < time.Millisecond {
		tick = time.Millisecond
	}
	wg.Go(func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				if b := r.busy.Load(); b != 0 && now.Sub(time.Unix(0, b)) > r.opts.MaxBusy {
					r.vm.Interrupt(ErrBusy)
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// enter runs f in the VM, watched.
func (r *run) enter(f func() error) error {
	r.busy.Store(time.Now().UnixNano())
	defer r.busy.Store(0)
	err := f()
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return fmt.Errorf("%w: one stretch of JavaScript ran over %s without awaiting an agent (an endless loop?); it was interrupted", ErrBusy, r.opts.MaxBusy)
	}
	return err
}

// post queues f to run on the loop.
func (r *run) post(f func()) {
	r.mu.Lock()
	r.q = append(r.q, f)
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// settle is posted by an async operation when it ends: it runs f in the
// VM unless the run failed.
func (r *run) settle(f func() error) { r.post(r.settler(f)) }

// settler returns the loop's job that settles with f.
func (r *run) settler(f func() error) func() {
	return func() {
		r.outstanding--
		if r.fatal != nil {
			return
		}
		if err := r.enter(f); err != nil {
			r.fatal = err
		}
	}
}

func (r *run) main(ctx context.Context, args json.RawMessage) error {
	if err := r.install(args); err != nil {
		return err
	}
	var top *goja.Promise
	err := r.enter(func() error {
		v, err := r.vm.RunProgram(r.script.prog)
		if err != nil {
			return err
		}
		fn, ok := goja.AssertFunction(v)
		if !ok {
			return errors.New("workflow: the script's wrapper is not a function")
		}
		pv, err := fn(goja.Undefined())
		if err != nil {
			return err
		}
		top, _ = pv.Export().(*goja.Promise)
		return nil
	})
	if err != nil {
		return r.scriptErr(err)
	}
	if top == nil {
		return errors.New("workflow: the script did not return a promise")
	}
	ended := false
	for {
		r.mu.Lock()
		q := r.q
		r.q = nil
		r.mu.Unlock()
		for _, f := range q {
			f()
		}
		if r.fatal != nil && !ended {
			ended = true
			r.root.cancel(r.fatal) // stop the agents; wait for them below
		}
		if !ended && top.State() != goja.PromiseStatePending {
			ended = true
			r.root.cancel(errors.New("workflow script ended")) // agents it did not await
		}
		r.mu.Lock()
		empty := len(r.q) == 0
		r.mu.Unlock()
		if !empty {
			continue
		}
		if r.outstanding == 0 {
			break
		}
		if len(r.held) > 0 {
			// Nothing else can move: the next cached answer goes, even if
			// one the earlier run settled before it is never asked for.
			r.nextSeq = minKey(r.held)
			r.releaseHeld()
			continue
		}
		if !ended && ctx.Err() != nil {
			ended = true
		}
		select {
		case <-r.kick:
		case <-ctx.Done():
		}
	}
	switch {
	case r.fatal != nil:
		return r.scriptErr(r.fatal)
	case ctx.Err() != nil:
		return context.Cause(ctx) // stopped: whatever the script made of its agents' failures
	case top.State() == goja.PromiseStatePending:
		return fmt.Errorf("%w: nothing runs and the script still waits", ErrStuck)
	case top.State() == goja.PromiseStateRejected:
		return r.rejection(top.Result())
	}
	var out json.RawMessage
	err = r.enter(func() error {
		s, err := r.stringify(goja.Undefined(), top.Result())
		if err != nil {
			return err
		}
		if goja.IsUndefined(s) {
			out = json.RawMessage("null")
		} else {
			out = json.RawMessage(s.String())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("workflow: the script's return value is not JSON: %w", r.scriptErr(err))
	}
	r.res.Value = out
	return nil
}

// scriptErr turns a VM error into a ScriptError (or keeps ErrBusy).
func (r *run) scriptErr(err error) error {
	if errors.Is(err, ErrBusy) || errors.Is(err, ErrStuck) {
		return err
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return r.rejection(ex.Value())
	}
	return &ScriptError{Message: err.Error(), budget: r.budgeted}
}

// rejection describes a thrown or rejected value.
func (r *run) rejection(v goja.Value) error {
	e := &ScriptError{budget: r.budgeted}
	if o, ok := v.(*goja.Object); ok {
		if m := o.Get("message"); m != nil && !goja.IsUndefined(m) {
			e.Message = m.String()
			if n := o.Get("name"); n != nil && !goja.IsUndefined(n) && n.String() != "Error" {
				e.Message = n.String() + ": " + e.Message
			}
			if s := o.Get("stack"); s != nil && !goja.IsUndefined(s) {
				e.Stack = scriptStack(s.String())
			}
			return e
		}
	}
	if v == nil {
		e.Message = "undefined"
	} else {
		e.Message = v.String()
	}
	return e
}

// releaseHeld posts the held cached answers that are next in order.
func (r *run) releaseHeld() {
	for {
		f, ok := r.held[r.nextSeq]
		if !ok {
			return
		}
		delete(r.held, r.nextSeq)
		r.nextSeq++
		r.post(f)
	}
}

func minKey(m map[int]func()) int {
	first, min := true, 0
	for k := range m {
		if first || k < min {
			first, min = false, k
		}
	}
	return min
}

// scriptStack keeps the frames of a JavaScript stack that are the
// script's (the engine's own Go functions show as native frames).
func scriptStack(s string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.HasSuffix(strings.TrimSpace(l), "(native)") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
