package swarm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// Defaults of LeadConfig.
const (
	DefaultMaxTeammates    = 16
	DefaultShutdownTimeout = 15 * time.Second
)

// SpawnRequest asks for a teammate.
type SpawnRequest struct {
	Name, Description, Prompt, Model, AgentType string
	// Mode is the permission mode asked for; "" inherits the lead's. It
	// is narrowed to the lead's own (permission.ChildMode): a teammate
	// never runs in a wider mode than its lead.
	Mode string
	// PlanModeRequired starts the teammate in plan mode: it works
	// read-only until the lead approves its plan.
	PlanModeRequired bool
	// Cwd is the teammate's working folder (its own worktree); "" is the
	// lead's.
	Cwd string
	// Color is the teammate's color (its agent definition's), one of
	// team.Palette; "" or another word picks the next free one.
	Color string
	// Window asks a pane backend for a window of the teammate's own
	// instead of a split of the shared one (the Agent tool's
	// use_splitpane false); nil is LeadConfig.Window.
	Window *bool
}

// SpawnInfo describes a spawned teammate.
type SpawnInfo struct {
	AgentID, Name, Team, Color, Model, Backend, PaneID string
	PlanModeRequired                                   bool
	// WindowName is the teammate's own window (tmux), "" when it runs
	// in a split pane or in-process.
	WindowName string
	// Existing is set when the teammate was already running: spawning is
	// idempotent by agent id.
	Existing bool
}

// Launch returns how to start member m on the named backend: Spec.Run for
// the in-process backend, Spec.Argv and Spec.Env for pane backends. The
// member has its name, color, model and mode set.
type Launch func(ctx context.Context, l *Lead, m team.Member, r SpawnRequest, backendName string) (backend.Spec, error)

// PermissionAsk is a teammate's permission question reaching the lead.
type PermissionAsk struct {
	Worker, Color string
	Tool          string
	ToolUseID     string
	Input         json.RawMessage
	Description   string
	InProcess     bool
}

// PermissionAnswer is the lead's answer.
type PermissionAnswer struct {
	Allow bool
	// Always adds Rule (ExactRule of the call when empty) for the whole
	// team, persisted through LeadConfig.PersistRule. With no Rule and
	// no exact rule, the call is allowed once.
	Always bool
	Rule   string
	// Message is the feedback the worker's model sees on a denial.
	Message string
	// UpdatedInput, with Allow, replaces the call's input: a question's
	// input with the person's answers (QuestionAsk).
	UpdatedInput json.RawMessage
}

// Answerer answers permission questions, one at a time.
type Answerer func(ctx context.Context, a PermissionAsk) (PermissionAnswer, error)

// PlanAsk is a teammate's plan waiting for approval.
type PlanAsk struct {
	Worker, Color string
	RequestID     string
	Plan          string
}

// PlanAnswer approves a plan, or sends it back with Feedback.
type PlanAnswer struct {
	Approve  bool
	Feedback string
}

// PlanAnswerer answers plan approval requests.
type PlanAnswerer func(ctx context.Context, a PlanAsk) (PlanAnswer, error)

// LeadConfig sets up a Lead.
type LeadConfig struct {
	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store

	Session string // the lead's session id (leadSessionId)
	Cwd     string // the lead's working folder
	Model   string // the lead's model, stored on its member
	// Mode is the lead's permission mode at the start; ModeNow, when set,
	// gives its current one (it changes: a person switches modes, plan
	// mode ends). Teammates inherit it and are never given a wider one
	// (permission.ChildMode); it is recorded on the lead's member in the
	// team file, where a pane teammate reads it as its own bound.
	Mode    string
	ModeNow func() permission.Mode

	// Backend starts teammates; Fallback, when set, is used when Backend
	// fails to start one (auto mode: pane backend, then in-process).
	Backend, Fallback backend.Backend
	Launch            Launch
	// Window gives pane teammates a window of their own rather than a
	// split (setting teammateWindow "window"); a SpawnRequest may say
	// otherwise.
	Window bool
	// NoAutoClaim says that pane teammates do not claim tasks by
	// themselves when idle (Claude Code's pane teammates do not): Quiet
	// then does not wait for an idle one to take an available task.
	NoAutoClaim bool
	// QueuingPanes says that pane teammates keep mail they take in the
	// middle of a turn for a turn of its own and remove it from their
	// inbox as they take it (Claude Code's do): the lead then counts their
	// turns to know when its messages are handled (lead_owed.go).
	QueuingPanes bool

	// Answer answers permission requests; nil denies them with a reason.
	Answer Answerer
	// AnswerPlan, when set, answers teammates' plan approval requests (a
	// person at the helm); nil hands them to the lead's model, which
	// answers with SendMessage.
	AnswerPlan PlanAnswerer
	// AnswerQuestions, when set, puts teammates' questions
	// (AskUserQuestion) to the person; nil tells them nobody can answer.
	AnswerQuestions QuestionAnswerer
	// Policy is the template for checking team-wide "allow always"
	// rules (its Shell parser and Home; its rules are ignored).
	Policy permission.Policy
	// PersistRule stores an "allow always" rule (in a settings file).
	PersistRule func(rule string) error

	// Reap, when set, kills what a pane teammate's process left running
	// (its recorded process groups) once its handle has ended, whatever
	// ended it, before its tasks are released; pid is its process, 0 when
	// the backend does not tell.
	Reap func(agentID string, pid int)

	// Registry, when set, holds every teammate as an in_process_teammate
	// task (lead_task.go).
	Registry *task.Registry

	MaxTeammates    int           // fan-out cap (default DefaultMaxTeammates)
	ShutdownTimeout time.Duration // wait after an approved shutdown before killing
	// ShutdownAnswerTimeout is how long a shutdown request waits for its
	// answer before the teammate is killed and removed (default
	// DefaultShutdownAnswerTimeout).
	ShutdownAnswerTimeout time.Duration
	// ReplyTimeout is how long the lead waits for a sign that a queuing
	// pane teammate handled its message (default DefaultReplyTimeout).
	ReplyTimeout time.Duration

	// Deliver hands text to the lead's model as input (a user-role
	// message, at its next tool-round boundary or as its next prompt).
	Deliver func(text string)
	// IdleNote, when set, adds a line about a teammate to its entry in
	// the idle digest (its worktree's branch, path and diffstat); "" adds
	// nothing. It is called without locks held and may do I/O.
	IdleNote func(name string) string

	Now     func() time.Time
	Log     *slog.Logger
	OnEvent func(Event)
}

// Lead is the lead's side of a team. It is safe for concurrent use.
type Lead struct {
	cfg LeadConfig

	answerMu sync.Mutex // the approval queue: one question at a time
	shutMu   sync.Mutex // serializes approved shutdowns' removal and last-one-out check

	mu        sync.Mutex
	team      string
	recorded  permission.Mode // the lead's mode last written on its member of team
	mates     map[string]*mate
	hidden    map[string]bool // pane id -> hidden, as the lead last made it (lead_panes.go)
	digest    []mailbox.IdleNotification
	dead      map[string]bool   // teammates that died, until one of the name is spawned again
	plans     map[string]string // plan request id -> digest
	approved  map[string]bool   // teammates whose shutdown approval the pump took, until handled
	rules     []string          // team-wide allow-always rules
	spentWhy  string            // why the session's budget is spent, once BudgetSpent was called
	led       []string          // every team the lead created, in order (Led)
	ending    int               // mail being dispatched, approved shutdowns being handled
	shutting  int               // approved shutdowns being handled
	stopInbox context.CancelFunc
	problems  []string // what did not end as the lead intended (Problems)
	deleteErr error    // the last failed DeleteTeam, cleared by a successful one
	watchCtx  context.Context
	stopWatch context.CancelFunc // ends the watches of teammates' inboxes
	// unreadWatch holds the teammates whose inbox is watched until it
	// changes (watchUnread).
	unreadWatch map[string]bool
	// closing is set once Close has begun: no goroutine joins wg after it
	// (goLive), since a WaitGroup's Add must not race with its Wait.
	closing  bool
	wg       sync.WaitGroup
	changed  chan struct{} // 1-slot: kicked by bump
	watching atomic.Bool   // the team file and task list are watched (Watching)
}

// mate is a teammate the lead started.
type mate struct {
	info     SpawnInfo
	h        backend.Handle
	expected bool // its end is expected (shutdown approved, killed by us)
	addRules func([]string)
	// interrupt aborts an in-process teammate's current turn.
	interrupt func() bool

	// What the lead waits to hear back from it (lead_owed.go).
	shutdownID    string      // an unanswered shutdown request
	shutdownTimer *time.Timer // ends it after ShutdownAnswerTimeout
	turns         *turns      // queuing pane teammates only
	task          task.ID     // its task, with LeadConfig.Registry
}

// NewLead returns a Lead with no team.
func NewLead(cfg LeadConfig) (*Lead, error) {
	switch {
	case cfg.Teams == nil || cfg.Mail == nil || cfg.Tasks == nil:
		return nil, errors.New("swarm: a lead needs the team, mailbox and task stores")
	case cfg.Backend == nil || cfg.Launch == nil:
		return nil, errors.New("swarm: a lead needs a backend and a Launch function")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxTeammates <= 0 {
		cfg.MaxTeammates = DefaultMaxTeammates
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.ShutdownAnswerTimeout <= 0 {
		cfg.ShutdownAnswerTimeout = DefaultShutdownAnswerTimeout
	}
	if cfg.ReplyTimeout <= 0 {
		cfg.ReplyTimeout = DefaultReplyTimeout
	}
	l := &Lead{cfg: cfg, mates: map[string]*mate{}, hidden: map[string]bool{}, plans: map[string]string{}, approved: map[string]bool{}, changed: make(chan struct{}, 1)}
	l.watchCtx, l.stopWatch = context.WithCancel(context.Background())
	return l, nil
}

// Mode returns the lead's current permission mode (LeadConfig.ModeNow,
// else LeadConfig.Mode; an unknown one reads as default).
func (l *Lead) Mode() permission.Mode {
	if l.cfg.ModeNow != nil {
		if m := l.cfg.ModeNow(); m != "" {
			return permission.ChildMode(m, "")
		}
	}
	return permission.ChildMode(permission.Mode(l.cfg.Mode), "")
}

// recordMode writes the lead's mode m on its member of teamName unless it
// was the last one written there: a pane teammate takes it as the widest
// mode it may run in.
func (l *Lead) recordMode(ctx context.Context, teamName string, m permission.Mode) error {
	l.mu.Lock()
	done := l.recorded == m
	l.mu.Unlock()
	if done {
		return nil
	}
	if _, err := team.UpdateMember(ctx, l.cfg.Teams, teamName, team.LeadName, func(lm *team.Member) error {
		lm.Mode = string(m)
		return nil
	}); err != nil {
		return err
	}
	l.mu.Lock()
	l.recorded = m
	l.mu.Unlock()
	return nil
}

// Team returns the name of the team the lead leads, or "".
func (l *Lead) Team() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.team
}

func (l *Lead) event(who, kind, text string) { l.eventBody(who, kind, text, "") }

// eventBody reports an event with a message's whole text.
func (l *Lead) eventBody(who, kind, text, body string) {
	if l.cfg.OnEvent != nil {
		l.cfg.OnEvent(Event{Time: l.cfg.Now(), Agent: who, Kind: kind, Text: text, Body: body})
	}
}

func (l *Lead) bump() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// CreateTeam creates a team led by the caller and starts reading the
// lead's inbox. A lead leads one team at a time.
func (l *Lead) CreateTeam(ctx context.Context, name, description, agentType string) (team.Config, error) {
	l.mu.Lock()
	if l.team != "" {
		cur := l.team
		l.mu.Unlock()
		return team.Config{}, fmt.Errorf("you already lead team %q: a lead leads one team at a time (delete it with TeamDelete first)", cur)
	}
	l.team = "\x00creating"
	l.mu.Unlock()
	leadMode := l.Mode()
	cfg, err := team.Create(ctx, l.cfg.Teams, team.CreateOptions{Name: name, Description: description,
		SessionID: l.cfg.Session, LeadType: agentType, LeadModel: l.cfg.Model, LeadMode: string(leadMode), Cwd: l.cfg.Cwd, Now: l.cfg.Now(), Pick: rand.IntN})
	reset := 0
	if err == nil {
		// A task list of the name left over from an earlier team is not
		// this team's work.
		if reset, err = tasklist.New(l.cfg.Tasks, cfg.Name).Reset(ctx); err != nil {
			err = fmt.Errorf("reset the task list left over from an earlier team %q: %w", cfg.Name, err)
			if derr := l.cfg.Teams.Delete(context.WithoutCancel(ctx), cfg.Name, nil); derr != nil {
				l.cfg.Log.Warn("remove a team whose task list could not be reset", "team", cfg.Name, "err", derr)
			}
		}
	}
	if err == nil {
		err = l.startInbox(cfg.Name)
	}
	l.mu.Lock()
	if err != nil {
		l.team = ""
	} else {
		l.team, l.recorded = cfg.Name, leadMode
		l.led = append(l.led, cfg.Name)
	}
	l.mu.Unlock()
	if err != nil {
		return team.Config{}, err
	}
	l.event(team.LeadName, EventCreated, fmt.Sprintf("created team %q", cfg.Name))
	if reset > 0 {
		l.event(team.LeadName, EventWarning, fmt.Sprintf("deleted %d task(s) left over from an earlier team %q", reset, cfg.Name))
	}
	return cfg, nil
}

// startInbox starts the goroutine that reads the lead's inbox.
func (l *Lead) startInbox(teamName string) error {
	ctx, cancel := context.WithCancel(context.Background())
	kick, err := l.cfg.Mail.Watch(ctx, teamName, team.LeadName)
	if err != nil {
		cancel()
		return fmt.Errorf("watch the lead's inbox: %w", err)
	}
	l.mu.Lock()
	l.stopInbox = cancel
	l.mu.Unlock()
	l.wg.Go(func() {
		for {
			if err := l.pump(ctx, teamName); err != nil && ctx.Err() == nil {
				l.cfg.Log.Warn("read the lead's inbox", "team", teamName, "err", err)
			}
			if _, ok := <-kick; !ok {
				return
			}
		}
	})
	l.watching.Store(l.watchTeam(ctx, teamName))
	return nil
}

// watchTeam wakes a waiting lead when the team file or the task list
// changes (a teammate gone idle, a task completed), when the stores can
// tell; it reports whether both watches run.
func (l *Lead) watchTeam(ctx context.Context, teamName string) bool {
	follow := func(ch <-chan struct{}, hidden bool) {
		l.wg.Go(func() {
			for range ch {
				l.bump()
				if hidden {
					l.syncHidden(ctx) // lead_panes.go
				}
			}
		})
	}
	n := 0
	if w, ok := l.cfg.Teams.(team.Watcher); ok {
		if ch, err := w.Watch(ctx, teamName); err == nil {
			follow(ch, l.canHide())
			n++
		} else {
			l.cfg.Log.Warn("watch the team file", "team", teamName, "err", err)
		}
	}
	if w, ok := l.cfg.Tasks.(tasklist.Watcher); ok {
		if ch, err := w.Watch(ctx, teamName); err == nil {
			follow(ch, false)
			n++
		} else {
			l.cfg.Log.Warn("watch the task list", "team", teamName, "err", err)
		}
	}
	return n == 2
}

// Watching reports whether the lead is woken (Changed) by every change
// Quiet depends on, through the stores' watches. Without them a waiting
// lead must look again now and then.
func (l *Lead) Watching() bool { return l.watching.Load() }

// Spawn starts a teammate in the lead's team. Spawning a name that is
// already running returns it (Existing) instead of a second copy.
func (l *Lead) Spawn(ctx context.Context, r SpawnRequest) (SpawnInfo, error) {
	teamName := l.Team()
	if teamName == "" || strings.HasPrefix(teamName, "\x00") {
		return SpawnInfo{}, errors.New("you lead no team: create one with TeamCreate before spawning teammates")
	}
	name, err := team.CanonicalName(r.Name)
	if err != nil {
		return SpawnInfo{}, err
	}
	if err := team.ValidateAgentName(name, false); err != nil {
		return SpawnInfo{}, err
	}
	if strings.TrimSpace(r.Prompt) == "" {
		return SpawnInfo{}, fmt.Errorf("teammate %s: the prompt is empty", name)
	}
	if f, err := mailbox.Decode(r.Prompt); err == nil {
		if _, text := f.(mailbox.Text); !text {
			return SpawnInfo{}, fmt.Errorf("teammate %s: the prompt may not be a protocol frame (%s)", name, f.Kind())
		}
	}
	l.mu.Lock()
	if l.approved[name] {
		// Its shutdown is still being handled, which ends by removing
		// name from the team and releasing its tasks: a new teammate of
		// that name would lose both.
		l.mu.Unlock()
		return SpawnInfo{}, fmt.Errorf("teammate %s approved its shutdown and is still leaving the team: spawn it again once its exit is reported, or pick another name", name)
	}
	if m, ok := l.mates[name]; ok && !ended(m.h) {
		info, h := m.info, m.h
		l.mu.Unlock()
		if h == nil {
			return SpawnInfo{}, fmt.Errorf("teammate %s is already being spawned; it will be in the team in a moment", name)
		}
		info.Existing = true
		return info, nil
	}
	live := 0
	for _, m := range l.mates {
		if !ended(m.h) {
			live++
		}
	}
	if live >= l.cfg.MaxTeammates {
		l.mu.Unlock()
		return SpawnInfo{}, fmt.Errorf("the team already has %d running teammates, the limit: shut one down before spawning %s", live, name)
	}
	// Reserve the name so that a concurrent spawn of it waits for us.
	res := &mate{info: SpawnInfo{Name: name}}
	if l.cfg.QueuingPanes && l.cfg.Backend.Name() != backend.InProcess {
		res.turns = &turns{owed: map[string]int{}, last: l.cfg.Now()}
	}
	l.mates[name] = res
	delete(l.dead, name) // a new teammate of the name: its idle notices are its own
	l.mu.Unlock()
	info, err := l.spawn(ctx, teamName, name, r, res)
	l.mu.Lock()
	if err != nil {
		if l.mates[name] == res {
			delete(l.mates, name)
		}
	}
	l.mu.Unlock()
	return info, err
}

// ended reports whether h has ended; a nil handle (a spawn in progress)
// has not.
func ended(h backend.Handle) bool {
	if h == nil {
		return false
	}
	select {
	case <-h.Done():
		return true
	default:
		return false
	}
}

func (l *Lead) spawn(ctx context.Context, teamName, name string, r SpawnRequest, res *mate) (SpawnInfo, error) {
	// Never wider than the lead's mode, whatever the Agent call or the
	// agent definition asked for; a teammate of a lead in plan mode plans
	// first too.
	leadMode := l.Mode()
	clamped := permission.ChildMode(leadMode, permission.Mode(r.Mode))
	if asked := permission.ChildMode(permission.ModeBypass, permission.Mode(r.Mode)); r.Mode != "" && !r.PlanModeRequired && clamped != asked {
		l.event(name, EventWarning, fmt.Sprintf("%s asked for permission mode %s; it runs in %s: a teammate never gets a wider mode than its lead's (%s)", name, r.Mode, clamped, leadMode))
	}
	if r.PlanModeRequired || clamped == permission.ModePlan {
		clamped, r.PlanModeRequired = permission.ModePlan, true
	}
	mode := string(clamped)
	if err := l.recordMode(ctx, teamName, leadMode); err != nil {
		return SpawnInfo{}, fmt.Errorf("record the lead's permission mode in team %s: %w", teamName, err)
	}
	model := r.Model
	if model == "" {
		model = l.cfg.Model
	}
	active := true
	color := ""
	if slices.Contains(team.Palette[:], r.Color) && r.Color != team.Palette[0] { // the lead's own stays the lead's
		color = r.Color
	}
	m, err := team.AddMember(ctx, l.cfg.Teams, teamName, team.Member{Name: name, AgentType: r.AgentType, Model: model, Color: color,
		Prompt: r.Prompt, PlanModeRequired: r.PlanModeRequired, Cwd: cmp.Or(r.Cwd, l.cfg.Cwd), Mode: mode,
		BackendType: l.cfg.Backend.Name(), IsActive: &active, Subscriptions: []string{}}, l.cfg.Now())
	if err != nil {
		return SpawnInfo{}, fmt.Errorf("add teammate %s: %w", name, err)
	}
	// From here a failure removes the member again.
	fail := func(err error) (SpawnInfo, error) {
		if rerr := team.RemoveMember(context.WithoutCancel(ctx), l.cfg.Teams, teamName, m.Name); rerr != nil {
			l.cfg.Log.Warn("remove a teammate that failed to start", "agent", m.Name, "err", rerr)
		}
		return SpawnInfo{}, err
	}
	be := l.cfg.Backend
	if be.Name() != backend.InProcess {
		// A pane teammate reads its first prompt from its inbox.
		if _, err := l.Mail().Send(ctx, teamName, m.Name, mailbox.Message{From: team.LeadName, Text: r.Prompt, Summary: firstLine(r.Description, mailbox.MaxSummaryLen)}); err != nil {
			return fail(fmt.Errorf("write the first prompt of %s: %w", m.Name, err))
		}
	}
	h, err := l.start(ctx, be, m, r)
	if err != nil && l.cfg.Fallback != nil && be.Name() != backend.InProcess {
		l.event(m.Name, EventFallback, fmt.Sprintf("%s backend failed (%v); running %s in-process", be.Name(), err, m.Name))
		be = l.cfg.Fallback
		l.mu.Lock()
		res.turns = nil // an in-process teammate is exact about its state
		l.mu.Unlock()
		// The prompt written to the inbox is handed over directly instead.
		if msgs, rerr := l.cfg.Mail.Read(ctx, teamName, m.Name, true); rerr == nil {
			ids := make([]string, 0, len(msgs))
			for _, msg := range msgs {
				ids = append(ids, msg.ID)
			}
			_, _ = l.cfg.Mail.MarkRead(ctx, teamName, m.Name, ids)
		}
		h, err = l.start(ctx, be, m, r)
	}
	if err != nil {
		return fail(fmt.Errorf("start teammate %s: %w", m.Name, err))
	}
	if h.PaneID() == m.TmuxPaneID && h.Backend() == m.BackendType {
		// Recorded already (an in-process teammate): no second write.
	} else if _, err := team.UpdateMember(ctx, l.cfg.Teams, teamName, m.Name, func(mm *team.Member) error {
		mm.TmuxPaneID, mm.BackendType = h.PaneID(), h.Backend()
		return nil
	}); err != nil {
		_ = h.Kill(context.WithoutCancel(ctx))
		return fail(fmt.Errorf("record the pane of %s: %w", m.Name, err))
	}
	info := SpawnInfo{AgentID: m.AgentID, Name: m.Name, Team: teamName, Color: m.Color, Model: model,
		Backend: h.Backend(), PaneID: h.PaneID(), PlanModeRequired: r.PlanModeRequired}
	if w, ok := h.(backend.Windowed); ok {
		info.WindowName = w.WindowName()
	}
	l.mu.Lock()
	res.info, res.h = info, h
	l.mu.Unlock()
	l.registerMate(teamName, res, r.Prompt)
	watch := func() {}
	if res.turns != nil {
		watch = func() { l.watchMate(l.watchCtx, teamName, res) }
	}
	if !l.goLive(func() { l.supervise(teamName, res) }, watch) {
		// Close began while this teammate started: it ends with the rest.
		_ = h.Kill(context.WithoutCancel(ctx))
		return fail(fmt.Errorf("spawn %s: the lead is closing", m.Name))
	}
	l.event(m.Name, EventSpawned, fmt.Sprintf("spawned %s (%s, %s)", m.Name, m.Color, h.Backend()))
	l.bump()
	return info, nil
}

func (l *Lead) start(ctx context.Context, be backend.Backend, m team.Member, r SpawnRequest) (backend.Handle, error) {
	spec, err := l.cfg.Launch(ctx, l, m, r, be.Name())
	if err != nil {
		return nil, err
	}
	spec.AgentID, spec.Name, spec.Team, spec.Color = m.AgentID, m.Name, l.Team(), m.Color
	spec.Window = l.cfg.Window
	if r.Window != nil {
		spec.Window = *r.Window
	}
	if spec.Cwd == "" {
		spec.Cwd = cmp.Or(m.Cwd, l.cfg.Cwd)
	}
	return be.Spawn(ctx, spec)
}

func (l *Lead) deliver(text string) {
	if l.cfg.Deliver != nil {
		l.cfg.Deliver(text)
	}
}

// DeleteTeam deletes the lead's team: refused while teammates are active
// (the error names them); otherwise it ends the teammates it started,
// closes their panes and removes the team's files.
func (l *Lead) DeleteTeam(ctx context.Context) (string, error) {
	teamName := l.Team()
	if teamName == "" || strings.HasPrefix(teamName, "\x00") {
		return "", errors.New("you lead no team: nothing to delete")
	}
	name, err := l.deleteTeam(ctx, teamName)
	l.mu.Lock()
	l.deleteErr = err // Problems reports it while the team is there
	l.mu.Unlock()
	return name, err
}

func (l *Lead) deleteTeam(ctx context.Context, teamName string) (string, error) {
	cfg, err := l.cfg.Teams.Get(ctx, teamName)
	if err != nil {
		return "", err
	}
	var active []string
	for _, m := range cfg.Members {
		if !m.IsLead() && m.Active() {
			active = append(active, m.Name)
		}
	}
	if len(active) > 0 {
		return "", &team.ActiveError{Team: teamName, Names: active}
	}
	l.killAll(ctx)
	if err := team.Delete(ctx, l.cfg.Teams, teamName); err != nil {
		return "", err
	}
	l.forgetTeam()
	l.event(team.LeadName, EventDeleted, fmt.Sprintf("deleted team %q", teamName))
	return teamName, nil
}

// forgetTeam leaves the lead without a team once its team is gone: it
// stops reading the lead's inbox and the team's watches.
func (l *Lead) forgetTeam() {
	l.mu.Lock()
	stop := l.stopInbox
	l.team, l.stopInbox, l.digest, l.rules, l.deleteErr = "", nil, nil, nil, nil
	l.watching.Store(false)
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// EndSession ends the lead's team with its session: the teammates it
// started are stopped, then the team is removed (its file, inboxes and
// task list), unless a member it did not start is still active (one that
// joined from another process or host): then the team is left, with a
// warning. It returns the name of the removed team, "" when there was
// none to remove.
func (l *Lead) EndSession(ctx context.Context) (string, error) {
	teamName := l.Team()
	if teamName == "" || strings.HasPrefix(teamName, "\x00") {
		return "", nil
	}
	// Who is ours before the kills: an ended teammate leaves l.mates.
	l.mu.Lock()
	ours := map[string]bool{}
	for name := range l.mates {
		ours[name] = true
	}
	l.mu.Unlock()
	l.killAll(ctx)
	err := l.cfg.Teams.Delete(ctx, teamName, func(c team.Config) error {
		var active []string
		for _, m := range c.Members {
			if !m.IsLead() && !ours[m.Name] && m.Active() {
				active = append(active, m.Name)
			}
		}
		if len(active) > 0 {
			return &team.ActiveError{Team: c.Name, Names: active}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, team.ErrNotFound) {
			return "", nil
		}
		l.event(team.LeadName, EventWarning, fmt.Sprintf("team %q was left in place at the end of the session: %v", teamName, err))
		return "", err
	}
	l.forgetTeam()
	l.event(team.LeadName, EventRemoved, fmt.Sprintf("removed team %q at the end of the session", teamName))
	return teamName, nil
}

// killAll ends every teammate the lead started, as expected ends.
func (l *Lead) killAll(ctx context.Context) {
	l.mu.Lock()
	var hs []backend.Handle
	for _, m := range l.mates {
		m.expected = true
		m.clearShutdown()
		if m.h != nil {
			hs = append(hs, m.h)
		}
	}
	l.mu.Unlock()
	for _, h := range hs {
		if err := h.Kill(ctx); err != nil {
			l.cfg.Log.Warn("kill a teammate", "pane", h.PaneID(), "err", err)
		}
	}
}

// Close ends every teammate the lead started and stops reading its inbox.
// The team itself is left on disk (TeamDelete removes it).
func (l *Lead) Close(ctx context.Context) error {
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
	l.killAll(ctx)
	var errs []error
	for _, be := range []backend.Backend{l.cfg.Backend, l.cfg.Fallback} {
		if be != nil {
			errs = append(errs, be.Close(ctx))
		}
	}
	l.mu.Lock()
	stop := l.stopInbox
	l.stopInbox = nil
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	l.stopWatch()
	l.wg.Wait()
	return errors.Join(errs...)
}

// goLive runs each f as one of the lead's goroutines, unless Close has
// begun, and reports whether it did. Callers that are not themselves
// goroutines of l.wg (a spawn, a Quiet) start theirs through it: their
// Add could otherwise race with Close's Wait.
func (l *Lead) goLive(fs ...func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return false
	}
	for _, f := range fs {
		l.wg.Go(f)
	}
	return true
}
