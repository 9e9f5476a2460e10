package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
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
	// Mode is the permission mode asked for; "" inherits the lead's.
	Mode string
	// PlanModeRequired starts the teammate in plan mode: it works
	// read-only until the lead approves its plan.
	PlanModeRequired bool
}

// SpawnInfo describes a spawned teammate.
type SpawnInfo struct {
	AgentID, Name, Team, Color, Model, Backend, PaneID string
	PlanModeRequired                                   bool
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
	// team, persisted through LeadConfig.PersistRule.
	Always bool
	Rule   string
	// Message is the feedback the worker's model sees on a denial.
	Message string
}

// Answerer answers permission questions, one at a time.
type Answerer func(ctx context.Context, a PermissionAsk) (PermissionAnswer, error)

// LeadConfig sets up a Lead.
type LeadConfig struct {
	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store

	Session string // the lead's session id (leadSessionId)
	Cwd     string // the lead's working folder
	Model   string // the lead's model, stored on its member
	// Mode is the lead's permission mode, inherited by teammates (never
	// bypassPermissions for one that must plan first).
	Mode string

	// Backend starts teammates; Fallback, when set, is used when Backend
	// fails to start one (auto mode: pane backend, then in-process).
	Backend, Fallback backend.Backend
	Launch            Launch
	// NoAutoClaim says that pane teammates do not claim tasks by
	// themselves when idle (Claude Code's pane teammates do not): Quiet
	// then does not wait for an idle one to take an available task.
	NoAutoClaim bool

	// Answer answers permission requests; nil denies them with a reason.
	Answer Answerer
	// Policy is the template for checking team-wide "allow always"
	// rules (its Shell parser and Home; its rules are ignored).
	Policy permission.Policy
	// PersistRule stores an "allow always" rule (in a settings file).
	PersistRule func(rule string) error

	MaxTeammates    int           // fan-out cap (default DefaultMaxTeammates)
	ShutdownTimeout time.Duration // wait after an approved shutdown before killing

	// Deliver hands text to the lead's model as input (a user-role
	// message, at its next tool-round boundary or as its next prompt).
	Deliver func(text string)

	Now     func() time.Time
	Log     *slog.Logger
	OnEvent func(Event)
}

// Lead is the lead's side of a team. It is safe for concurrent use.
type Lead struct {
	cfg LeadConfig

	answerMu sync.Mutex // the approval queue: one question at a time

	mu        sync.Mutex
	team      string
	mates     map[string]*mate
	digest    []mailbox.IdleNotification
	plans     map[string]string // plan request id -> digest
	rules     []string          // team-wide allow-always rules
	activity  int               // bumps on every teammate message or state change
	ending    int               // mail being dispatched, approved shutdowns being handled
	shutting  int               // approved shutdowns being handled
	stopInbox context.CancelFunc
	wg        sync.WaitGroup
	changed   chan struct{} // 1-slot: activity bumped
}

// mate is a teammate the lead started.
type mate struct {
	info     SpawnInfo
	h        backend.Handle
	expected bool // its end is expected (shutdown approved, killed by us)
	idle     bool
	addRules func([]string)
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
	return &Lead{cfg: cfg, mates: map[string]*mate{}, plans: map[string]string{}, changed: make(chan struct{}, 1)}, nil
}

// Team returns the name of the team the lead leads, or "".
func (l *Lead) Team() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.team
}

func (l *Lead) event(who, kind, text string) {
	if l.cfg.OnEvent != nil {
		l.cfg.OnEvent(Event{Time: l.cfg.Now(), Agent: who, Kind: kind, Text: text})
	}
}

func (l *Lead) bump() {
	l.mu.Lock()
	l.activity++
	l.mu.Unlock()
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
	cfg, err := team.Create(ctx, l.cfg.Teams, team.CreateOptions{Name: name, Description: description,
		SessionID: l.cfg.Session, LeadType: agentType, LeadModel: l.cfg.Model, Cwd: l.cfg.Cwd, Now: l.cfg.Now(), Pick: rand.IntN})
	if err == nil {
		err = l.startInbox(cfg.Name)
	}
	l.mu.Lock()
	if err != nil {
		l.team = ""
	} else {
		l.team = cfg.Name
	}
	l.mu.Unlock()
	if err != nil {
		return team.Config{}, err
	}
	l.event(team.LeadName, EventCreated, fmt.Sprintf("created team %q", cfg.Name))
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
	return nil
}

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
	l.mates[name] = res
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
	mode := l.cfg.Mode
	if r.Mode != "" {
		mode = r.Mode
	}
	switch {
	case r.PlanModeRequired:
		mode = string(permission.ModePlan) // never bypass for one that must plan
	case mode == string(permission.ModePlan) || mode == string(permission.ModeDontAsk):
		mode = string(permission.ModeDefault)
	}
	model := r.Model
	if model == "" {
		model = l.cfg.Model
	}
	active := true
	m, err := team.AddMember(ctx, l.cfg.Teams, teamName, team.Member{Name: name, AgentType: r.AgentType, Model: model,
		Prompt: r.Prompt, PlanModeRequired: r.PlanModeRequired, Cwd: l.cfg.Cwd, Mode: mode,
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
		if _, err := l.cfg.Mail.Send(ctx, teamName, m.Name, mailbox.Message{From: team.LeadName, Text: r.Prompt, Summary: firstLine(r.Description, mailbox.MaxSummaryLen)}); err != nil {
			return fail(fmt.Errorf("write the first prompt of %s: %w", m.Name, err))
		}
	}
	h, err := l.start(ctx, be, m, r)
	if err != nil && l.cfg.Fallback != nil && be.Name() != backend.InProcess {
		l.event(m.Name, EventFallback, fmt.Sprintf("%s backend failed (%v); running %s in-process", be.Name(), err, m.Name))
		be = l.cfg.Fallback
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
	if _, err := team.UpdateMember(ctx, l.cfg.Teams, teamName, m.Name, func(mm *team.Member) error {
		mm.TmuxPaneID, mm.BackendType = h.PaneID(), h.Backend()
		return nil
	}); err != nil {
		_ = h.Kill(context.WithoutCancel(ctx))
		return fail(fmt.Errorf("record the pane of %s: %w", m.Name, err))
	}
	info := SpawnInfo{AgentID: m.AgentID, Name: m.Name, Team: teamName, Color: m.Color, Model: model,
		Backend: h.Backend(), PaneID: h.PaneID(), PlanModeRequired: r.PlanModeRequired}
	l.mu.Lock()
	res.info, res.h = info, h
	l.mu.Unlock()
	l.wg.Go(func() { l.supervise(teamName, res) })
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
	if spec.Cwd == "" {
		spec.Cwd = l.cfg.Cwd
	}
	return be.Spawn(ctx, spec)
}

// RegisterRules lets an in-process teammate receive the team's "allow
// always" rules as they are added; it gets the existing ones at once.
func (l *Lead) RegisterRules(name string, add func([]string)) {
	l.mu.Lock()
	rules := append([]string(nil), l.rules...)
	if m := l.mates[name]; m != nil {
		m.addRules = add
	}
	l.mu.Unlock()
	if len(rules) > 0 {
		add(rules)
	}
}

// supervise waits for a teammate's end and, unless it was expected,
// handles its death.
func (l *Lead) supervise(teamName string, m *mate) {
	<-m.h.Done()
	l.mu.Lock()
	expected := m.expected
	if l.mates[m.info.Name] == m {
		delete(l.mates, m.info.Name)
	}
	if !expected {
		l.ending++ // the team is busy until the lead has been told
	}
	l.mu.Unlock()
	if expected {
		return
	}
	defer func() {
		l.mu.Lock()
		l.ending--
		l.mu.Unlock()
		l.bump()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := m.h.Err()
	if err == nil {
		// A clean exit: a teammate that approved its shutdown (the lead
		// may not have read the approval yet), or a process that ended
		// on its own. Not a death; its tasks go back to the list.
		if _, uerr := team.UpdateMember(ctx, l.cfg.Teams, teamName, m.info.Name, func(mm *team.Member) error {
			f := false
			mm.IsActive = &f
			return nil
		}); uerr != nil && !errors.Is(uerr, team.ErrNotFound) {
			l.cfg.Log.Warn("mark an exited teammate inactive", "agent", m.info.Name, "err", uerr)
		}
		released := l.release(ctx, teamName, m.info.Name)
		l.event(m.info.Name, EventExit, m.info.Name+" exited"+releasedNote(released))
		if len(released) > 0 {
			l.deliver(fmt.Sprintf("<system-reminder>\nTeammate %s exited.%s\n</system-reminder>", m.info.Name, releasedNote(released)))
		}
		l.bump()
		return
	}
	why := err.Error()
	if _, err := team.UpdateMember(ctx, l.cfg.Teams, teamName, m.info.Name, func(mm *team.Member) error {
		f := false
		mm.IsActive = &f
		if mm.Extra == nil {
			mm.Extra = map[string]json.RawMessage{}
		}
		mm.Extra[StatusKey] = json.RawMessage(`"` + StatusDead + `"`)
		return nil
	}); err != nil && !errors.Is(err, team.ErrNotFound) {
		l.cfg.Log.Warn("mark a dead teammate", "agent", m.info.Name, "err", err)
	}
	released := l.release(ctx, teamName, m.info.Name)
	l.event(m.info.Name, EventDead, fmt.Sprintf("%s died (%s)%s", m.info.Name, why, releasedNote(released)))
	l.deliver(fmt.Sprintf("<system-reminder>\nTeammate %s died unexpectedly (%s); it is marked dead in the team file.%s You can spawn a replacement with the Agent tool.\n</system-reminder>",
		m.info.Name, why, releasedNote(released)))
	l.bump()
}

// StatusKey is the member key troupe records a teammate's state under
// when the team file has no field for it; StatusDead marks a teammate
// whose process died (as opposed to idle, isActive false).
const (
	StatusKey  = "troupeStatus"
	StatusDead = "dead"
)

func (l *Lead) release(ctx context.Context, teamName, name string) []tasklist.Task {
	ts, err := tasklist.New(l.cfg.Tasks, teamName).Release(ctx, name)
	if err != nil {
		l.cfg.Log.Warn("release the tasks of a teammate", "agent", name, "err", err)
	}
	return ts
}

func releasedNote(ts []tasklist.Task) string {
	if len(ts) == 0 {
		return ""
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("#%s %q", t.ID, t.Subject)
	}
	return fmt.Sprintf(" %d task(s) were unassigned: %s. Use TaskList to see them.", len(ts), strings.Join(parts, ", "))
}

func (l *Lead) deliver(text string) {
	if l.cfg.Deliver != nil {
		l.cfg.Deliver(text)
	}
}

// pump reads the lead's unread messages and dispatches them.
func (l *Lead) pump(ctx context.Context, teamName string) error {
	// Busy while mail moves from the inbox to the lead's model.
	l.mu.Lock()
	l.ending++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.ending--
		l.mu.Unlock()
	}()
	msgs, err := l.cfg.Mail.Read(ctx, teamName, team.LeadName, true)
	if err != nil {
		var ce *mailbox.CorruptError
		if !errors.As(err, &ce) {
			return err
		}
		l.cfg.Log.Warn("the lead's inbox was corrupt and moved aside", "err", err)
	}
	if len(msgs) == 0 {
		return nil
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	if _, err := l.cfg.Mail.MarkRead(ctx, teamName, team.LeadName, ids); err != nil {
		return err
	}
	var plain []mailbox.Message
	for _, m := range msgs {
		f, err := mailbox.Decode(m.Text)
		if err != nil {
			f = mailbox.Text(m.Text)
		}
		switch f := f.(type) {
		case mailbox.IdleNotification:
			l.idle(m, f)
		case mailbox.ShutdownApproved:
			l.mu.Lock()
			l.ending++ // counted before the mail is marked read: never invisible
			l.shutting++
			l.mu.Unlock()
			l.wg.Go(func() { l.shutdownApproved(teamName, m, f) })
		case mailbox.ShutdownRejected:
			l.event(m.From, EventShutdown, fmt.Sprintf("%s rejected shutdown: %s", m.From, f.Reason))
			plain = append(plain, m)
		case mailbox.PermissionRequest:
			if f.AgentID != m.From {
				l.event(m.From, EventWarning, fmt.Sprintf("dropped a permission request naming %q sent by %q", f.AgentID, m.From))
				continue
			}
			l.wg.Go(func() { l.answerMail(ctx, teamName, m, f) })
		case mailbox.PlanApprovalRequest:
			l.mu.Lock()
			l.plans[f.RequestID] = planDigest(f.PlanContent)
			l.mu.Unlock()
			l.event(m.From, EventPlan, fmt.Sprintf("%s asks the lead to approve its plan (%d bytes)", m.From, len(f.PlanContent)))
			plain = append(plain, m)
		default:
			l.event(m.From, EventMessage, fmt.Sprintf("%s → lead: %s", m.From, firstLine(messageText(m, f), 100)))
			plain = append(plain, m)
		}
	}
	if len(plain) > 0 {
		l.deliver(forLead(plain))
	}
	l.bump()
	return nil
}

func messageText(m mailbox.Message, f mailbox.Frame) string {
	if m.Summary != "" {
		return m.Summary
	}
	if t, ok := f.(mailbox.Text); ok {
		return string(t)
	}
	return m.Text
}

// idle records an idle notification for the digest.
func (l *Lead) idle(m mailbox.Message, f mailbox.IdleNotification) {
	l.mu.Lock()
	if mt := l.mates[m.From]; mt != nil {
		mt.idle = true
	}
	// One entry per teammate: the latest replaces an earlier one, but a
	// result or completed task in the earlier one is kept.
	kept := false
	for i, d := range l.digest {
		if d.From == f.From {
			if f.Result == "" {
				f.Result = d.Result
			}
			if f.CompletedTaskID == "" {
				f.CompletedTaskID, f.CompletedStatus = d.CompletedTaskID, d.CompletedStatus
			}
			l.digest[i] = f
			kept = true
		}
	}
	if !kept {
		l.digest = append(l.digest, f)
	}
	l.mu.Unlock()
	what := "is idle"
	if f.IdleReason != "" && f.IdleReason != mailbox.IdleAvailable {
		what += " (" + f.IdleReason + ")"
	}
	if f.CompletedTaskID != "" {
		what += ", completed task #" + f.CompletedTaskID
	}
	l.event(m.From, EventIdle, m.From+" "+what)
}

// TakeDigest returns the pending idle notifications as one short message
// for the lead's model, and clears them; "" when there are none.
func (l *Lead) TakeDigest() string {
	l.mu.Lock()
	d := l.digest
	l.digest = nil
	l.mu.Unlock()
	if len(d) == 0 {
		return ""
	}
	l.event(team.LeadName, EventDigest, fmt.Sprintf("idle notifications of %d teammate(s) reach the lead as one digest", len(d)))
	sort.SliceStable(d, func(i, j int) bool { return d[i].From < d[j].From })
	var b strings.Builder
	fmt.Fprintf(&b, "<teammate-idle-digest count=\"%d\">\n", len(d))
	for _, n := range d {
		fmt.Fprintf(&b, "- %s is idle", n.From)
		if n.IdleReason != "" && n.IdleReason != mailbox.IdleAvailable {
			fmt.Fprintf(&b, " (%s", n.IdleReason)
			if n.FailureReason != "" {
				fmt.Fprintf(&b, ": %s", n.FailureReason)
			}
			b.WriteString(")")
		}
		if n.CompletedTaskID != "" {
			fmt.Fprintf(&b, "; completed task #%s (%s)", n.CompletedTaskID, n.CompletedStatus)
		}
		if n.Summary != "" {
			fmt.Fprintf(&b, "; last message: %s", n.Summary)
		}
		if n.Result != "" {
			fmt.Fprintf(&b, "\n  report: %s", strings.ReplaceAll(n.Result, "\n", "\n  "))
		}
		b.WriteString("\n")
	}
	b.WriteString("</teammate-idle-digest>\nIdle teammates wait for a message or a task; this is a status update, not user input.")
	return b.String()
}

// Status is a snapshot of the team for a waiting lead.
type Status struct {
	Running  int // teammates whose process or goroutine runs
	Working  int // of those, the ones not idle
	Activity int // bumps on every teammate message or state change
}

// Status returns the team's snapshot.
func (l *Lead) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Status{Activity: l.activity}
	for _, m := range l.mates {
		if m.h == nil || ended(m.h) {
			continue
		}
		s.Running++
		if !m.idle {
			s.Working++
		}
	}
	return s
}

// Changed returns a channel kicked when the team's activity changes.
func (l *Lead) Changed() <-chan struct{} { return l.changed }

// MarkBusy records that a teammate got work (a message from the lead), so
// it is not counted idle until its next idle notification.
func (l *Lead) MarkBusy(name string) {
	l.mu.Lock()
	if m := l.mates[name]; m != nil {
		m.idle = false
	}
	l.mu.Unlock()
}

// PlanDigest returns the digest of a plan approval request the lead got.
func (l *Lead) PlanDigest(requestID string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.plans[requestID]
	return d, ok
}

// shutdownApproved ends a teammate that approved its shutdown: waits for
// it to exit (killing it after ShutdownTimeout), closes its pane, removes
// it from the team and releases its tasks.
func (l *Lead) shutdownApproved(teamName string, msg mailbox.Message, f mailbox.ShutdownApproved) {
	name := msg.From
	l.event(name, EventShutdown, name+" approved shutdown")
	l.mu.Lock()
	m := l.mates[name]
	if m != nil {
		m.expected = true
	}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.ending--
		l.mu.Unlock()
		l.bump()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.ShutdownTimeout+30*time.Second)
	defer cancel()
	if m != nil && m.h != nil {
		t := time.NewTimer(l.cfg.ShutdownTimeout)
		select {
		case <-m.h.Done():
		case <-t.C:
			l.event(name, EventWarning, fmt.Sprintf("%s did not exit within %s after approving shutdown; killing it", name, l.cfg.ShutdownTimeout))
		}
		t.Stop()
		if err := m.h.Kill(ctx); err != nil {
			l.cfg.Log.Warn("kill a teammate after shutdown", "agent", name, "err", err)
		}
	}
	if err := team.RemoveMember(ctx, l.cfg.Teams, teamName, name); err != nil && !errors.Is(err, team.ErrNotFound) {
		l.cfg.Log.Warn("remove a teammate after shutdown", "agent", name, "err", err)
	}
	released := l.release(ctx, teamName, name)
	l.mu.Lock()
	for i, d := range l.digest {
		if d.From == name && d.Result == "" && d.CompletedTaskID == "" {
			l.digest = append(l.digest[:i], l.digest[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
	l.event(name, EventExit, name+" has shut down"+releasedNote(released))
	// The last one out tells the lead the team is empty: no other
	// shutdown in progress, and no teammate left in the team file.
	cfg, cerr := l.cfg.Teams.Get(ctx, teamName)
	l.mu.Lock()
	l.shutting--
	last := l.shutting == 0 && cerr == nil
	for _, mm := range cfg.Members {
		if !mm.IsLead() {
			last = false
		}
	}
	l.mu.Unlock()
	switch {
	case len(released) > 0:
		l.deliver(fmt.Sprintf("<system-reminder>\n%s has shut down.%s\n</system-reminder>", name, releasedNote(released)))
	case last:
		l.deliver(fmt.Sprintf("<system-reminder>\n%s has shut down. All teammates have shut down; the team is empty.\n</system-reminder>", name))
	}
}

// AskInProcess answers an in-process teammate's permission question
// through the lead's approval queue (approve.Asker for that teammate).
func (l *Lead) AskInProcess(ctx context.Context, worker, color string, req approve.AskRequest) (approve.Answer, error) {
	a := PermissionAsk{Worker: worker, Color: color, Tool: req.Tool, ToolUseID: req.ToolUseID, Input: req.Input,
		Description: req.Reason, InProcess: true}
	ans, rules, err := l.decide(ctx, a)
	if err != nil {
		return approve.Answer{}, err
	}
	if ans.Allow && len(rules) > 0 {
		l.mu.Lock()
		m := l.mates[worker]
		l.mu.Unlock()
		if m != nil && m.addRules != nil {
			m.addRules(rules)
		}
	}
	return approve.Answer{Allow: ans.Allow, Message: ans.Message}, nil
}

// decide answers one question: from the team's allow-always rules when
// one covers it, else from the Answerer (one question at a time). It
// returns the rules the answer added.
func (l *Lead) decide(ctx context.Context, a PermissionAsk) (PermissionAnswer, []string, error) {
	what := fmt.Sprintf("%s asks to run %s (%s)", a.Worker, a.Tool, summarizeInput(a.Input))
	if l.teamAllows(a) {
		l.event(a.Worker, EventPermission, what+": allowed by a team rule")
		return PermissionAnswer{Allow: true}, nil, nil
	}
	if l.cfg.Answer == nil {
		l.event(a.Worker, EventPermission, what+": denied, nobody answers permission requests")
		return PermissionAnswer{Message: "the team lead has no way to answer permission requests in this session; the call was denied"}, nil, nil
	}
	l.answerMu.Lock()
	ans, err := l.cfg.Answer(ctx, a)
	l.answerMu.Unlock()
	if err != nil {
		return PermissionAnswer{}, nil, err
	}
	var added []string
	switch {
	case ans.Allow && ans.Always:
		rule := ans.Rule
		if rule == "" {
			rule = ExactRule(a.Tool, a.Input)
		}
		if _, err := permission.ParseRule(rule); err != nil {
			return PermissionAnswer{}, nil, fmt.Errorf("allow always: %w", err)
		}
		if l.cfg.PersistRule != nil {
			if err := l.cfg.PersistRule(rule); err != nil {
				l.event(a.Worker, EventWarning, "could not persist the rule "+rule+": "+err.Error())
			}
		}
		l.mu.Lock()
		l.rules = append(l.rules, rule)
		var sinks []func([]string)
		for _, m := range l.mates {
			if m.addRules != nil && m.info.Name != a.Worker {
				sinks = append(sinks, m.addRules)
			}
		}
		l.mu.Unlock()
		for _, s := range sinks {
			s([]string{rule})
		}
		added = []string{rule}
		l.event(a.Worker, EventPermission, what+": allowed always ("+rule+", for the whole team)")
	case ans.Allow:
		l.event(a.Worker, EventPermission, what+": allowed once")
	default:
		l.event(a.Worker, EventPermission, what+": denied"+feedback(ans.Message))
	}
	return ans, added, nil
}

func feedback(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + msg + ")"
}

// teamAllows reports whether an allow-always rule of the team covers a.
func (l *Lead) teamAllows(a PermissionAsk) bool {
	l.mu.Lock()
	rules := append([]string(nil), l.rules...)
	l.mu.Unlock()
	if len(rules) == 0 {
		return false
	}
	p := l.cfg.Policy
	p.Allow, p.Ask, p.Deny = nil, nil, nil
	for _, r := range rules {
		if pr, err := permission.ParseRule(r); err == nil {
			p.Allow = append(p.Allow, pr)
		}
	}
	d := p.Check(permission.Request{Tool: a.Tool, Input: a.Input, Cwd: l.cfg.Cwd, Mode: permission.ModeDefault})
	return d.Behavior == permission.Allow && d.Rule != nil
}

// answerMail answers a permission request that came by mail.
func (l *Lead) answerMail(ctx context.Context, teamName string, m mailbox.Message, f mailbox.PermissionRequest) {
	ans, rules, err := l.decide(ctx, PermissionAsk{Worker: m.From, Color: m.Color, Tool: f.ToolName, ToolUseID: f.ToolUseID,
		Input: f.Input, Description: f.Description})
	resp := mailbox.PermissionResponse{RequestID: f.RequestID, ToolUseID: f.ToolUseID}
	switch {
	case err != nil:
		resp.Subtype, resp.Error = "error", "the team lead could not answer: "+err.Error()
	case !ans.Allow:
		resp.Subtype, resp.Error = "error", "Permission denied by the team lead"+feedback(ans.Message)
	default:
		input := f.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		digest, derr := mailbox.InputDigest(f.ToolName, input)
		if derr != nil {
			resp.Subtype, resp.Error = "error", "the request's input does not decode: "+derr.Error()
			break
		}
		resp.Subtype = "success"
		resp.ApprovedRequest = &mailbox.ApprovedRequest{ToolUseID: f.ToolUseID, ToolName: f.ToolName, InputDigest: digest}
		resp.Response = &mailbox.PermissionVerdict{UpdatedInput: input, PermissionUpdates: []json.RawMessage{}}
		if len(rules) > 0 {
			var prs []permission.Rule
			for _, r := range rules {
				prs = append(prs, permission.MustParseRule(r))
			}
			if u, uerr := addRulesUpdate(prs, "session"); uerr == nil {
				resp.Response.PermissionUpdates = append(resp.Response.PermissionUpdates, u)
			}
		}
	}
	text, err := mailbox.Encode(resp)
	if err == nil {
		_, err = l.cfg.Mail.Send(ctx, teamName, m.From, mailbox.Message{From: team.LeadName, Text: text})
	}
	if err != nil && ctx.Err() == nil {
		l.cfg.Log.Warn("answer a permission request", "agent", m.From, "err", err)
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
	l.mu.Lock()
	stop := l.stopInbox
	l.team, l.stopInbox, l.digest, l.rules = "", nil, nil, nil
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	l.event(team.LeadName, EventDeleted, fmt.Sprintf("deleted team %q", teamName))
	return teamName, nil
}

// killAll ends every teammate the lead started, as expected ends.
func (l *Lead) killAll(ctx context.Context) {
	l.mu.Lock()
	var hs []backend.Handle
	for _, m := range l.mates {
		m.expected = true
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
	l.wg.Wait()
	return errors.Join(errs...)
}

// Quiet reports whether the team has nothing in flight: no running
// teammate is working (isActive in the team file), none has unread mail,
// and no task is waiting for an idle teammate to claim it. A headless
// lead ends its session only when the team is quiet and its own model has
// nothing pending.
func (l *Lead) Quiet(ctx context.Context) (bool, error) {
	teamName := l.Team()
	if teamName == "" || strings.HasPrefix(teamName, "\x00") {
		return true, nil
	}
	l.mu.Lock()
	if l.ending > 0 {
		l.mu.Unlock()
		return false, nil
	}
	var running []string
	for name, m := range l.mates {
		if m.h == nil || !ended(m.h) {
			running = append(running, name)
		}
	}
	l.mu.Unlock()
	// Mail the lead has not read yet (an approval, a report) is work.
	if msgs, err := l.cfg.Mail.Read(ctx, teamName, team.LeadName, true); err != nil {
		return false, err
	} else if len(msgs) > 0 {
		return false, nil
	}
	if len(running) == 0 {
		return true, nil
	}
	cfg, err := l.cfg.Teams.Get(ctx, teamName)
	if err != nil {
		return false, err
	}
	idle := 0
	for _, name := range running {
		m, ok := cfg.Member(name)
		if !ok {
			continue
		}
		if m.Active() {
			return false, nil
		}
		msgs, err := l.cfg.Mail.Read(ctx, teamName, name, true)
		if err != nil {
			return false, err
		}
		if len(msgs) > 0 {
			return false, nil
		}
		if !m.PlanModeRequired && (!l.cfg.NoAutoClaim || m.BackendType == backend.InProcess) {
			idle++
		}
	}
	if idle > 0 {
		tasks, err := tasklist.New(l.cfg.Tasks, teamName).Tasks(ctx)
		if err != nil {
			return false, err
		}
		for _, t := range tasks {
			if tasklist.Claimable(t, tasks) {
				return false, nil
			}
		}
	}
	return true, nil
}
