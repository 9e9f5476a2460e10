package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// HistoryLen is how many messages a teammate's UI history keeps.
const HistoryLen = 50

// MaxKeepWorking bounds how many times in a row TeammateConfig.BeforeIdle
// may send a teammate back to work, so a hook that always refuses cannot
// keep it busy forever.
const MaxKeepWorking = 10

// TeammateConfig sets up a Teammate.
type TeammateConfig struct {
	Team, Name, Color string
	// PaneID and Backend say where it runs, for shutdown_approved frames.
	PaneID, Backend string

	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store

	// Build returns the teammate's agent configuration. Its tools'
	// hooks and its approver's asker should call the Teammate's methods
	// (ShutdownApproved, PlanSubmitted, Ask). The Teammate chains
	// OnEvent to follow what the model does.
	Build func(tm *Teammate) (agent.Config, error)

	// Prompt is the first prompt; empty means the first inbox message.
	Prompt string
	// PlanMode says the teammate starts in plan mode and must have its
	// plan approved by the lead; SetMode is called with the mode the lead
	// grants ("default", never bypassPermissions) and returns the mode
	// the teammate then runs in (narrowed to its lead's, see
	// permission.ChildMode).
	PlanMode bool
	SetMode  func(mode string) string
	// AddAllowRules is called with the allow rules of an "allow always"
	// answer, so that the same call is not asked again.
	AddAllowRules func(rules []string)
	// Trust, when set, decides whether a protocol frame in the inbox
	// comes from the lead (lead signatures); an untrusted frame is
	// ignored and reported.
	Trust func(mailbox.Message) bool

	// AskTimeout bounds the wait for the lead's answer to a permission
	// request (default DefaultAskTimeout).
	AskTimeout time.Duration
	// NoAutoClaim turns off claiming available tasks while idle.
	NoAutoClaim bool
	// ClaimLinger is how long a teammate that lost the race for a task
	// stays marked active, waiting for the next task to become ready,
	// before it marks itself idle (default DefaultClaimLinger).
	ClaimLinger time.Duration
	// ActiveDelay is how long a teammate woken by mail while idle works
	// before it writes its active flag to the team (default
	// DefaultActiveDelay; negative: at once). A wake that ends sooner
	// writes nothing to the team: its mail stays unread until the flag
	// is written or the idle notification of its run is sent, so that
	// the work is visible all along (unread, or the teammate active).
	ActiveDelay time.Duration
	// Background, when set, reports whether background work of the
	// teammate's (a shell started with run_in_background, a background
	// agent) still runs or has ended without its notification handed to
	// the teammate yet (Notify). While it does, a teammate whose turn
	// ended sends its idle notification but stays active in the team
	// file: its work goes on, so a lead waiting for its team to be quiet
	// waits for it, and the notification, which wakes the teammate, leads
	// to its report.
	Background func() bool
	// BeforeIdle, when set, is asked before the teammate goes idle after
	// a run that ended normally (the TeammateIdle hook): keep makes it
	// run again at once with feedback as its prompt. At most
	// MaxKeepWorking runs in a row are kept; then it goes idle anyway.
	BeforeIdle func(ctx context.Context) (keep bool, feedback string)
	// Final, when set, reports the run errors after which the teammate
	// cannot work any more (its budget is spent, budget.ErrExceeded): it
	// then sends the lead its idle notification with the error as the
	// failure reason and ends cleanly instead of waiting for work.
	Final func(runErr error) bool
	// Spent, when set, reports the run errors after which no model call
	// can start until the session ends (the session's budget is spent,
	// budget.ErrExceeded): the teammate tells the lead in its idle
	// notification, then waits for the lead's shutdown request and
	// approves it itself, since its model cannot answer (teammate_budget.go).
	Spent func(runErr error) bool

	Now     func() time.Time
	Log     *slog.Logger
	OnEvent func(Event)
}

// Teammate runs one teammate. Its methods are safe for concurrent use.
type Teammate struct {
	cfg TeammateConfig
	ag  *agent.Agent

	// actMu orders going idle against mail arriving (pump) and serialises
	// every write of the teammate's active flag.
	actMu sync.Mutex
	// flag is the active flag this teammate last stored (or is storing):
	// flagUnknown, flagActive or flagIdle; or flagWaking, active in memory
	// while the team still says idle. Written with actMu held.
	flag atomic.Int32
	// activeTimer fires ActiveDelay after a wake set flagWaking: the
	// teammate then writes its flag and marks its mail read (flushWake).
	// Received by the pump's looping goroutine while the teammate works,
	// and by the run goroutine while it waits for work (next).
	activeTimer *time.Timer
	// retry is the pending retry of a failed flag write (retryFlag), or
	// nil; retryGap the wait before it; retryGen counts the retries set
	// and withdrawn, so that a timer that fired before it was stopped
	// tells it is not the current one. Guarded by actMu.
	retry    *time.Timer
	retryGap time.Duration
	retryGen uint64

	mu       sync.Mutex
	running  bool
	inputs   []string      // prompts waiting for the next run
	wake     chan struct{} // 1-slot: inputs changed
	shutdown string        // approved shutdown request id
	stop     stopState     // answering shutdown without the model (teammate_budget.go)
	plan     string        // pending plan approval request id
	planned  bool          // still in plan mode
	asks     map[string]chan mailbox.PermissionResponse
	settled  map[string]bool // mirrored requests answered in process (AskMirrored)
	unmarked map[string]bool // ids of messages dispatched but not yet marked read
	history  []string
	turn     turnState
}

// turnState is what the runner learns of one run from the agent's events.
type turnState struct {
	lastPeerSummary string
	sentToLead      bool
	completedTask   string
	workingTask     string // the task it claimed or took up in the run
	denied          string // the last call a person or rule refused: "Bash: why"
}

// NewTeammate builds a teammate and its agent.
func NewTeammate(cfg TeammateConfig) (*Teammate, error) {
	switch {
	case cfg.Team == "" || cfg.Name == "":
		return nil, errors.New("swarm: a teammate needs a team and a name")
	case cfg.Teams == nil || cfg.Mail == nil || cfg.Tasks == nil:
		return nil, errors.New("swarm: a teammate needs the team, mailbox and task stores")
	case cfg.Build == nil:
		return nil, errors.New("swarm: TeammateConfig.Build is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.AskTimeout <= 0 {
		cfg.AskTimeout = DefaultAskTimeout
	}
	if cfg.ClaimLinger <= 0 {
		cfg.ClaimLinger = DefaultClaimLinger
	}
	if cfg.ActiveDelay == 0 {
		cfg.ActiveDelay = DefaultActiveDelay
	}
	tm := &Teammate{cfg: cfg, wake: make(chan struct{}, 1), planned: cfg.PlanMode,
		asks: map[string]chan mailbox.PermissionResponse{}, settled: map[string]bool{}, unmarked: map[string]bool{},
		activeTimer: time.NewTimer(time.Hour)}
	tm.activeTimer.Stop()
	ac, err := cfg.Build(tm)
	if err != nil {
		return nil, err
	}
	user := ac.OnEvent
	ac.OnEvent = func(e agent.Event) {
		tm.observe(e)
		if user != nil {
			user(e)
		}
	}
	if tm.ag, err = agent.New(ac); err != nil {
		return nil, err
	}
	return tm, nil
}

// Agent returns the teammate's agent (for interrupting its current turn).
func (tm *Teammate) Agent() *agent.Agent { return tm.ag }

// History returns the latest messages the teammate received and sent, at
// most HistoryLen, oldest first.
func (tm *Teammate) History() []string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return append([]string(nil), tm.history...)
}

func (tm *Teammate) remember(s string) {
	tm.history = append(tm.history, s)
	if n := len(tm.history) - HistoryLen; n > 0 {
		tm.history = append(tm.history[:0], tm.history[n:]...)
	}
}

// ShutdownApproved records that the model approved shutdown request id
// and ends the current turn at once: the approval is sent, and another
// model call (seconds on a real model) would only keep the lead waiting.
// The teammate then ends.
func (tm *Teammate) ShutdownApproved(requestID string) {
	tm.mu.Lock()
	tm.shutdown = requestID
	tm.stop.asked = nil
	ag := tm.ag
	tm.mu.Unlock()
	tm.event(EventShutdown, "approved shutdown "+requestID)
	if ag != nil {
		ag.Interrupt()
	}
}

// PlanSubmitted records the plan approval request the model sent.
func (tm *Teammate) PlanSubmitted(requestID, digest string) {
	tm.mu.Lock()
	tm.plan = requestID
	tm.mu.Unlock()
	tm.event(EventPlan, "sent its plan to the lead for approval")
}

func (tm *Teammate) event(kind, text string) {
	if tm.cfg.OnEvent != nil {
		tm.cfg.OnEvent(Event{Time: tm.cfg.Now(), Agent: tm.cfg.Name, Kind: kind, Text: text})
	}
}

// observe follows the model's tool calls: messages to peers and the lead,
// and tasks it completes.
func (tm *Teammate) observe(e agent.Event) {
	if e.Type == agent.EventToolResult && e.Denied != "" && e.Call != nil {
		tm.mu.Lock()
		tm.turn.denied = e.Call.Name + ": " + e.Denied
		tm.mu.Unlock()
		return
	}
	if e.Type != agent.EventToolUse || e.Call == nil {
		return
	}
	switch e.Call.Name {
	case "SendMessage":
		var in struct {
			To      string          `json:"to"`
			Summary string          `json:"summary"`
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal(e.Call.Input, &in) != nil {
			return
		}
		var text string
		_ = json.Unmarshal(in.Message, &text)
		tm.mu.Lock()
		if in.To == team.LeadName || in.To == "main" {
			tm.turn.sentToLead = true
		} else if in.Summary != "" {
			tm.turn.lastPeerSummary = in.Summary
		} else if text != "" {
			tm.turn.lastPeerSummary = "to " + in.To + ": " + firstLine(text, mailbox.MaxSummaryLen-len(in.To)-4)
		}
		if text != "" {
			tm.remember("→ " + in.To + ": " + text)
		}
		tm.mu.Unlock()
	case "TaskUpdate":
		var in struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
			Owner  string `json:"owner"`
		}
		if json.Unmarshal(e.Call.Input, &in) != nil {
			return
		}
		tm.mu.Lock()
		switch {
		case in.Status == string(tasklist.StatusCompleted):
			tm.turn.completedTask = in.TaskID
		case in.Status == string(tasklist.StatusInProgress) || in.Owner == tm.cfg.Name:
			tm.turn.workingTask = in.TaskID
		}
		tm.mu.Unlock()
	}
}

// Run runs the teammate until an approved shutdown (nil), or ctx ends
// (ctx's cause). It reads its inbox on a watch the whole time
// (inboxPump).
func (tm *Teammate) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	kick, err := tm.cfg.Mail.Watch(ctx, tm.cfg.Team, tm.cfg.Name)
	if err != nil {
		return fmt.Errorf("teammate %s: watch its inbox: %w", tm.cfg.Name, err)
	}
	p := &inboxPump{tm: tm, kick: kick, owed: true}
	defer tm.activeTimer.Stop() // after the pump: mail not marked stays unread
	defer p.finish()
	defer tm.ag.Kill()
	defer cancel(nil)

	prompt := tm.cfg.Prompt
	if prompt == "" {
		// The spawn prompt comes by mail; it is the first thing to do,
		// before any task on the list.
		if prompt, err = tm.next(ctx, p, false); err != nil {
			return tm.ended(ctx, err)
		}
	}
	p.background(ctx)
	kept := 0 // runs BeforeIdle kept going in a row
	for {
		if f := tm.flag.Load(); f != flagActive && f != flagWaking {
			// Marked already by the pump that brought the prompt (maybe
			// still writing it, or waiting for ActiveDelay to pass): the
			// model does not wait for that write.
			tm.actMu.Lock()
			tm.setActiveLocked(ctx, true)
			tm.actMu.Unlock()
		}
		res, runErr := tm.runOnce(ctx, prompt)
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		tm.mu.Lock()
		done := tm.shutdown != ""
		turn := tm.turn
		tm.turn = turnState{}
		tm.mu.Unlock()
		if done {
			tm.leave(ctx)
			return nil
		}
		if runErr != nil && tm.cfg.Spent != nil && tm.cfg.Spent(runErr) {
			return tm.awaitShutdown(ctx, res, runErr, turn)
		}
		if runErr != nil && tm.cfg.Final != nil && tm.cfg.Final(runErr) {
			// No model call can run any more (a spent budget): the lead
			// learns why from its idle notification, and the teammate
			// leaves, its tasks released.
			runErr = fmt.Errorf("%w; it has stopped working", runErr)
			// On the timeline before the lead hears it: a lead that ends
			// its run on the news must not end before the line is out.
			tm.event(EventWarning, "stopped: "+runErr.Error())
			tm.idle(ctx, res, runErr, turn)
			tm.goIdle(ctx)
			return nil
		}
		if keep, feedback := tm.keepWorking(ctx, res, runErr, kept); keep {
			kept++
			prompt = feedback
			continue
		}
		kept = 0
		// The idle notification first, then idle in the team file: a lead
		// that sees the teammate idle has its notification already (read
		// or unread), never neither.
		tm.idle(ctx, res, runErr, turn)
		tm.goIdle(ctx)
		p.foreground()
		if prompt, err = tm.next(ctx, p, !tm.cfg.NoAutoClaim); err != nil {
			return tm.ended(ctx, err)
		}
		p.background(ctx)
	}
}

// keepWorking asks BeforeIdle whether the teammate goes back to work
// instead of idle, after kept such runs in a row.
func (tm *Teammate) keepWorking(ctx context.Context, res agent.Result, runErr error, kept int) (bool, string) {
	if tm.cfg.BeforeIdle == nil || runErr != nil || res.Interrupted {
		return false, ""
	}
	keep, feedback := tm.cfg.BeforeIdle(ctx)
	if !keep || ctx.Err() != nil {
		return false, ""
	}
	if kept >= MaxKeepWorking {
		tm.event(EventWarning, fmt.Sprintf("the TeammateIdle hook kept it working %d times in a row; going idle anyway", kept))
		return false, ""
	}
	if strings.TrimSpace(feedback) == "" {
		feedback = "A TeammateIdle hook asks you to keep working before going idle."
	}
	tm.event(EventHook, "kept working by a TeammateIdle hook: "+firstLine(feedback, 120))
	return true, feedback
}

// runOnce runs the agent on prompt, and again while messages that came
// in during the run wait in its queue.
func (tm *Teammate) runOnce(ctx context.Context, prompt string) (agent.Result, error) {
	tm.mu.Lock()
	tm.running = true
	tm.mu.Unlock()
	res, err := tm.ag.Run(ctx, prompt)
	for err == nil && ctx.Err() == nil && tm.ag.Pending() > 0 && !tm.stopping() {
		var more agent.Result
		more, err = tm.ag.Run(ctx, "")
		res.Text, res.Interrupted, res.StopReason = more.Text, more.Interrupted, more.StopReason
	}
	tm.mu.Lock()
	tm.running = false
	tm.mu.Unlock()
	return res, err
}

func (tm *Teammate) stopping() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.shutdown != ""
}

// goIdle marks the teammate idle in the team file, unless work came in
// since its run ended (the pump marks it active before queueing mail) or
// its background work goes on (TeammateConfig.Background).
func (tm *Teammate) goIdle(ctx context.Context) {
	tm.actMu.Lock()
	defer tm.actMu.Unlock()
	// Its background work first: a task that ended has its notification
	// queued (Notify) before it stops counting, so one of the two looks
	// sees it.
	busy := tm.cfg.Background != nil && tm.cfg.Background()
	tm.mu.Lock()
	busy = busy || len(tm.inputs) > 0 || tm.ag.Pending() > 0
	tm.mu.Unlock()
	if !busy {
		tm.setActiveLocked(ctx, false)
	}
}

// The active flag as this teammate last stored it.
const (
	flagUnknown int32 = iota
	flagActive
	flagIdle
	// flagWaking: woken by mail while idle, not yet written (ActiveDelay);
	// the team says idle and the mail is unread.
	flagWaking
)

// DefaultActiveDelay is the default of TeammateConfig.ActiveDelay. In a
// team of a thousand, each write of a flag rewrites a team file of about
// 300 KB that every host then reads again; a short wake (a message
// answered at once, a scripted model) need not write at all.
const DefaultActiveDelay = 100 * time.Millisecond

// setActiveLocked stores the teammate's active flag, unless it stored that
// value last: a teammate woken by mail flips it once (in the pump), not
// again when its run starts, so a wake takes the team's lock at most once
// and a turn that changes nothing takes it not at all. Only the teammate
// itself marks itself active; a lead that marks it idle (it exited) or a
// user's edit is corrected at its next flip. The caller holds actMu.
//
// From flagWaking (the team says idle, the wake's mail is unread) active
// writes the flag and then marks the mail read; idle writes nothing and
// marks the mail read: the caller has sent the run's idle notification.
func (tm *Teammate) setActiveLocked(ctx context.Context, active bool) {
	want := flagIdle
	if active {
		want = flagActive
	}
	prev := tm.flag.Load()
	if prev == want {
		return
	}
	tm.flag.Store(want) // before the write, so that the run need not wait for it
	if prev != flagWaking {
		tm.storeActiveLocked(ctx, active)
		return
	}
	tm.activeTimer.Stop()
	if active {
		tm.storeActiveLocked(ctx, true)
	}
	tm.markDispatchedLocked(ctx)
}

// leave ends the teammate on an approved shutdown: it marks read the mail
// of a wake whose flag was never written (flagWaking), which it has
// handled (its approval is sent) and which nothing else would mark, the
// team file still saying idle; then it reports the shutdown.
func (tm *Teammate) leave(ctx context.Context) {
	tm.actMu.Lock()
	if tm.flag.CompareAndSwap(flagWaking, flagIdle) {
		tm.activeTimer.Stop()
		tm.markDispatchedLocked(ctx)
	}
	tm.actMu.Unlock()
	tm.event(EventShutdown, "shutting down")
}

// flushWake writes the active flag of a teammate still working
// ActiveDelay after a wake, then marks the wake's mail read.
func (tm *Teammate) flushWake(ctx context.Context) {
	tm.actMu.Lock()
	defer tm.actMu.Unlock()
	if tm.flag.Load() == flagWaking {
		tm.setActiveLocked(ctx, true)
	}
}

// markDispatchedLocked marks read the messages dispatched and not yet
// marked. A failure leaves them to the next read of the inbox, which
// marks them without dispatching them again. The caller holds actMu.
func (tm *Teammate) markDispatchedLocked(ctx context.Context) {
	tm.mu.Lock()
	ids := slices.Collect(maps.Keys(tm.unmarked))
	tm.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	if _, err := tm.cfg.Mail.MarkRead(ctx, tm.cfg.Team, tm.cfg.Name, ids); err != nil {
		if ctx.Err() == nil {
			tm.cfg.Log.Warn("mark messages read", "agent", tm.cfg.Name, "err", err)
		}
		return
	}
	tm.mu.Lock()
	for _, id := range ids {
		delete(tm.unmarked, id)
	}
	tm.mu.Unlock()
}

// storeActiveLocked writes the active flag that tm.flag already says. A
// failed write leaves the flag unknown, so that the next flip writes
// again. The caller holds actMu.
func (tm *Teammate) storeActiveLocked(ctx context.Context, active bool) {
	if tm.retry != nil {
		tm.retry.Stop() // this write supersedes the one it would retry
		tm.retry = nil
	}
	tm.retryGen++ // and a retry whose timer fired already gives way
	err := team.SetActive(ctx, tm.cfg.Teams, tm.cfg.Team, tm.cfg.Name, active)
	if err == nil {
		tm.retryGap = 0
		return
	}
	tm.flag.Store(flagUnknown)
	if ctx.Err() != nil || errors.Is(err, team.ErrNoMember) || errors.Is(err, team.ErrNotFound) {
		return // the teammate is ending, or left the team: nothing to retry
	}
	// A teammate that goes idle and fails to say so (a timeout on a loaded
	// store, a lost reply) would be shown working until its next flip,
	// and a lead waiting for its team to settle would wait that long: the
	// write is tried again, later and later, until one lands or a newer
	// flip replaces it. A timer, not a goroutine: an idle teammate holds
	// one goroutine.
	tm.retryGap = min(max(2*tm.retryGap, flagRetryMin), flagRetryMax)
	tm.cfg.Log.Warn("mark teammate active", "agent", tm.cfg.Name, "active", active, "err", err, "retry_in", tm.retryGap)
	gen := tm.retryGen
	tm.retry = time.AfterFunc(tm.retryGap, func() { tm.retryFlag(ctx, active, gen) })
}

// The bounds of the wait before a failed flag write is tried again.
const (
	flagRetryMin = 100 * time.Millisecond
	flagRetryMax = 5 * time.Second
)

// retryFlag writes again the flag whose write failed, unless a newer flip
// wrote one since (or failed too, and set a retry of its own: gen tells).
func (tm *Teammate) retryFlag(ctx context.Context, active bool, gen uint64) {
	tm.actMu.Lock()
	defer tm.actMu.Unlock()
	if tm.retry == nil || tm.retryGen != gen || ctx.Err() != nil || tm.flag.Load() != flagUnknown {
		return
	}
	tm.retry = nil
	tm.setActiveLocked(ctx, active)
}

// idle sends the lead one idle notification for the run that ended.
func (tm *Teammate) idle(ctx context.Context, res agent.Result, runErr error, turn turnState) {
	n := mailbox.IdleNotification{From: tm.cfg.Name, Timestamp: tm.cfg.Now().UTC().Format(mailbox.TimeLayout),
		IdleReason: mailbox.IdleAvailable, Summary: turn.lastPeerSummary}
	switch {
	case runErr != nil:
		n.IdleReason = "failed"
		n.FailureReason = truncate(runErr.Error(), 200)
	case res.Interrupted:
		n.IdleReason = "interrupted"
	}
	n.CompletedTaskID, n.CompletedStatus, n.FailureReason = tm.outcome(ctx, turn, runErr, n.FailureReason)
	if !turn.sentToLead && strings.TrimSpace(res.Text) != "" {
		// A report printed instead of sent still reaches the lead.
		n.Result = truncate(res.Text, MaxResultLen)
	}
	text, err := mailbox.Encode(n)
	if err == nil {
		_, err = tm.cfg.Mail.Send(ctx, tm.cfg.Team, team.LeadName, mailbox.Message{From: tm.cfg.Name, Color: tm.cfg.Color, Text: text})
	}
	if err != nil && ctx.Err() == nil {
		tm.cfg.Log.Warn("send idle notification", "agent", tm.cfg.Name, "err", err)
	}
	what := "idle"
	if n.IdleReason != mailbox.IdleAvailable {
		what += " (" + n.IdleReason + ")"
	}
	what += outcomeNote(n)
	tm.event(EventIdle, what)
}

// outcome says how the run ended for the lead's idle digest, as the
// seed's idle notification has it: resolved (a task was completed),
// failed (the run ended in an error), blocked (a call it needed was
// refused, or the task it works on waits for another), or "" (nothing to
// report), with the task and the reason.
func (tm *Teammate) outcome(ctx context.Context, turn turnState, runErr error, reason string) (taskID, status, why string) {
	switch {
	case turn.completedTask != "":
		return turn.completedTask, mailbox.CompletedResolved, reason
	case runErr != nil:
		return turn.workingTask, mailbox.CompletedFailed, reason
	case turn.denied != "":
		return turn.workingTask, mailbox.CompletedBlocked, truncate("permission refused for "+turn.denied, 200)
	case turn.workingTask == "":
		return "", "", reason
	}
	tasks, err := tasklist.New(tm.cfg.Tasks, tm.cfg.Team).Tasks(ctx)
	if err != nil {
		return "", "", reason
	}
	for _, t := range tasks {
		if t.ID != turn.workingTask || t.Status == tasklist.StatusCompleted {
			continue
		}
		if open := tasklist.OpenBlockers(t, tasks); len(open) > 0 {
			return t.ID, mailbox.CompletedBlocked, truncate("task #"+t.ID+" waits for #"+strings.Join(open, ", #"), 200)
		}
	}
	return "", "", reason
}

// DefaultClaimLinger is the default of TeammateConfig.ClaimLinger.
const DefaultClaimLinger = 2 * time.Second

// next waits for the next prompt: queued messages, or with autoClaim a
// task it claims. The caller has the inbox pump in the foreground: next
// reads the inbox itself when its watch kicks.
//
// A teammate is marked active before it claims (so that no one sees a
// task taken by an idle teammate). One that loses the race does not mark
// itself idle again at once: while a drain goes on, every task change
// would make every idle teammate write the team twice. It stays active
// for TeammateConfig.ClaimLinger after its last lost claim, trying again on each change,
// and goes idle when that passes without a win.
func (tm *Teammate) next(ctx context.Context, p *inboxPump, autoClaim bool) (string, error) {
	var taskKick <-chan struct{}
	if w, ok := tm.cfg.Tasks.(tasklist.Watcher); ok && autoClaim {
		// One watch for the teammate's life (ctx is its run's), made at
		// its first wait: a watch made at every wait lived on with the run
		// after next returned, one more each turn.
		if p.tasks == nil {
			ch, err := w.Watch(ctx, tm.cfg.Team)
			if err != nil {
				return "", fmt.Errorf("teammate %s: watch the task list: %w", tm.cfg.Name, err)
			}
			p.tasks = ch
		}
		taskKick = p.tasks
	}
	// Without a watchable task list, look again now and then: the only
	// fallback to a timer, for stores that cannot notify.
	var slow <-chan time.Time
	if taskKick == nil && autoClaim {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		slow = t.C
	}
	linger := time.NewTimer(tm.cfg.ClaimLinger)
	linger.Stop()
	defer linger.Stop()
	var lingering <-chan time.Time
	p.catchUp(ctx)
	// Whether the task list may have changed since the last look. A kick
	// of the inbox does not change it, and a look on every kick (a read
	// of the whole list; on a NATS cluster, a request to the stream's
	// leader) held up the model's start by tens of milliseconds in a team
	// of a thousand, with the mail that woke it already read.
	look := true
	for {
		tm.mu.Lock()
		if tm.shutdown != "" {
			tm.mu.Unlock()
			return "", errShuttingDown
		}
		if len(tm.inputs) > 0 || tm.ag.Pending() > 0 {
			p := strings.Join(tm.inputs, "\n\n")
			tm.inputs = nil
			tm.mu.Unlock()
			return p, nil
		}
		planned := tm.planned
		tm.mu.Unlock()
		if autoClaim && !planned && look {
			look = false
			p, ok, lost := tm.claim(ctx)
			if ok {
				return p, nil
			}
			if lost {
				linger.Reset(tm.cfg.ClaimLinger)
				lingering = linger.C
			}
		}
		kick, reading := p.watch()
		select {
		case <-tm.wake:
			look = true // a plan approved, say
		case _, ok := <-kick:
			p.kicked(ctx, ok)
		case <-reading:
			p.read()
			look = true // a plan verdict read, say
		case _, ok := <-taskKick:
			if !ok {
				taskKick = nil
				p.tasks = closedKick
			}
			look = true
		case <-slow:
			look = true
		case <-lingering:
			lingering = nil
			tm.goIdle(ctx)
		case <-tm.activeTimer.C:
			tm.flushWake(ctx)
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	}
}

// claim takes the first available task, if any, and returns its prompt.
// lost reports that it tried and another teammate was faster: it is then
// still marked active.
func (tm *Teammate) claim(ctx context.Context) (prompt string, ok, lost bool) {
	l := tasklist.New(tm.cfg.Tasks, tm.cfg.Team)
	tasks, err := l.Tasks(ctx)
	if err != nil || !slices.ContainsFunc(tasks, func(t tasklist.Task) bool { return tasklist.Claimable(t, tasks) }) {
		return "", false, false
	}
	// Active before the claim, so that nobody sees the task taken by an
	// idle teammate (a lead waiting for its team to go quiet).
	tm.actMu.Lock()
	tm.setActiveLocked(ctx, true)
	tm.actMu.Unlock()
	t, err := l.Claim(ctx, tm.cfg.Name)
	if errors.Is(err, tasklist.ErrNoneReady) {
		return "", false, true
	}
	if err != nil {
		tm.goIdle(ctx) // idle again, unless mail came meanwhile
		if ctx.Err() == nil {
			tm.cfg.Log.Warn("claim a task", "agent", tm.cfg.Name, "err", err)
		}
		return "", false, false
	}
	tm.mu.Lock()
	tm.turn.workingTask = t.ID
	tm.mu.Unlock()
	tm.event(EventClaim, fmt.Sprintf("claimed task #%s %q", t.ID, t.Subject))
	return fmt.Sprintf(`You claimed task #%s from the team's task list (it is now in_progress and yours).

Subject: %s

%s

Do it. When it is done, mark it completed with TaskUpdate (taskId %q, status "completed") and tell the team lead what you did with SendMessage.`, t.ID, t.Subject, t.Description, t.ID), true, false
}

// queue hands a prompt to the model: into the running agent's pending
// queue (it reaches the model at the next tool-round boundary), or into
// the inputs of the next run.
func (tm *Teammate) queue(text string) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.remember(text)
	if tm.running {
		tm.ag.Send(text)
	} else {
		tm.inputs = append(tm.inputs, text)
	}
	select {
	case tm.wake <- struct{}{}:
	default:
	}
}

// pump reads the unread messages of the inbox, dispatches them
// (permission verdicts to the waiting call, plan verdicts to the mode
// switch, everything else to the model), and marks them read.
//
// Mail for the model wakes it before the bookkeeping: the teammate's
// flag is set active in memory, the messages are queued, then the flag is
// written to the team, then the messages marked read, so that at every
// moment the work is visible (unread, or the teammate active) and the
// model does not wait for two writes of shared files (with a hundred teammates on one team file those writes queue for
// its lock, which held deliveries for seconds). A teammate woken while
// idle in the team file puts off both writes for ActiveDelay (flagWaking):
// if its run ends sooner, the idle notification is sent and the mail
// marked read, and the team file is not written at all. Messages dispatched but
// not yet marked read (the mark failed) are remembered by id and not
// dispatched again; a message without an id is marked read first, as it
// could not be told apart on the next read.
func (tm *Teammate) pump(ctx context.Context) error {
	msgs, err := tm.cfg.Mail.Read(ctx, tm.cfg.Team, tm.cfg.Name, true)
	if err != nil {
		var ce *mailbox.CorruptError
		if !errors.As(err, &ce) {
			return err
		}
		tm.cfg.Log.Warn("corrupt inbox moved aside", "agent", tm.cfg.Name, "err", err)
	}
	if len(msgs) == 0 {
		return nil
	}
	ids := make([]string, len(msgs))
	forModel, withoutID := false, false
	fresh := msgs[:0:0]
	tm.mu.Lock()
	for i, m := range msgs {
		ids[i] = m.ID
		if m.ID == "" {
			withoutID = true
		} else if tm.unmarked[m.ID] {
			continue // dispatched already; only its read mark is owed
		}
		fresh = append(fresh, m)
		if mailbox.ProtocolKind(m.Text) != mailbox.KindPermissionResponse {
			forModel = true
		}
	}
	if tm.stop.spent {
		// Out of budget, waiting for its shutdown: no run takes mail any
		// more, so it must not show the teammate working.
		forModel = false
	}
	tm.mu.Unlock()
	// Only a read of the inbox sets flagWaking, and reads never overlap:
	// a flag not waking now does not become so before this read ends.
	waking := tm.flag.Load() == flagWaking
	running := true
	if forModel || waking {
		// Held until the mail is marked read (or left to the wake's end),
		// so goIdle cannot undo the flip in between; and whether the run
		// still goes is looked at under it: a run that ended since and
		// went idle needs the flip, or its mail would be marked read with
		// the teammate shown idle.
		tm.actMu.Lock()
		defer tm.actMu.Unlock()
		tm.mu.Lock()
		running = tm.running
		tm.mu.Unlock()
	}
	flip := forModel && !running
	markRead := func() error {
		if _, err := tm.cfg.Mail.MarkRead(ctx, tm.cfg.Team, tm.cfg.Name, ids); err != nil {
			return err
		}
		tm.mu.Lock()
		for _, id := range ids {
			delete(tm.unmarked, id)
		}
		tm.mu.Unlock()
		return nil
	}
	if withoutID {
		if flip || waking {
			tm.setActiveLocked(ctx, true)
		}
		if err := markRead(); err != nil {
			return err
		}
		flip = false
	}
	// Active before the model is handed the mail, in memory (the write
	// follows, or waits for ActiveDelay): the woken run finds the flag set
	// and does not wait on actMu for this write.
	owed, later := false, false
	switch f := tm.flag.Load(); {
	case f == flagWaking:
		later = true // marked read with the wake's mail
	case !flip || f == flagActive:
	case f == flagIdle && tm.cfg.ActiveDelay > 0:
		tm.flag.Store(flagWaking)
		tm.activeTimer.Reset(tm.cfg.ActiveDelay)
		later = true
	default:
		tm.flag.Store(flagActive)
		owed = true
	}
	tm.dispatch(ctx, fresh)
	if withoutID || later {
		return nil
	}
	if owed {
		tm.storeActiveLocked(ctx, true)
	}
	return markRead()
}

// dispatch hands messages read from the inbox to where they go.
func (tm *Teammate) dispatch(ctx context.Context, msgs []mailbox.Message) {
	tm.mu.Lock()
	for _, m := range msgs {
		if m.ID != "" {
			tm.unmarked[m.ID] = true
		}
	}
	tm.mu.Unlock()
	var plain []mailbox.Message
	var forged []mailbox.Frame // verdicts that failed verification, weighed after the verified ones
	flush := func() {
		if len(plain) > 0 {
			tm.queue(teammateMessage(plain))
			plain = nil
		}
	}
	for _, m := range msgs {
		f, err := mailbox.Decode(m.Text)
		if err != nil {
			f = mailbox.Text(m.Text)
		}
		if tm.cfg.Trust != nil && !tm.cfg.Trust(m) {
			switch f.(type) {
			case mailbox.PermissionResponse, mailbox.PlanApprovalResponse:
				forged = append(forged, f)
				continue
			}
			if _, isText := f.(mailbox.Text); !isText {
				tm.event(EventWarning, fmt.Sprintf("ignored a %s frame from %s that failed lead verification", f.Kind(), m.From))
				continue
			}
			m = unverified(m) // shown to the model as verified="false"
		}
		switch f := f.(type) {
		case mailbox.PermissionResponse:
			tm.answer(f)
		case mailbox.ShutdownRequest:
			flush()
			tm.event(EventShutdown, "got a shutdown request from "+m.From)
			if tm.shutdownAsked(ctx, m, f) {
				continue // approved by the runtime: no model call answers it
			}
			tm.queue(shutdownPrompt(m, f))
		case mailbox.PlanApprovalResponse:
			flush()
			tm.planVerdict(m, f)
		default:
			plain = append(plain, m)
		}
	}
	flush()
	for _, f := range forged {
		switch f := f.(type) {
		case mailbox.PermissionResponse:
			tm.refuseUnverified(f)
		case mailbox.PlanApprovalResponse:
			tm.refuseUnverifiedPlan(f)
		}
	}
}

// Notify hands the teammate's model a note (a background task's
// notification, say): at its next tool-round boundary, or as its next
// prompt.
func (tm *Teammate) Notify(text string) { tm.queue(text) }
