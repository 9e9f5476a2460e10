package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/worktree"
)

// runTeammate runs this process as a teammate (started with --agent-id,
// --agent-name and --team-name, by a troupe or Claude Code lead in a
// pane): it joins the team in the store, reads its first prompt from its
// inbox, and works until its shutdown is approved or it is stopped.
func (a *app) runTeammate(cmd *cobra.Command, h *headless) error {
	leadGone := false
	defer func() { // the last thing done: everything else is closed
		if leadGone {
			closeOwnPane(a.Getenv) // leadgone.go
		}
	}()
	tf := h.teams.mate
	if err := h.teams.checkAskTimeout(); err != nil {
		return err
	}
	a.claudeCodeHome()
	cwd, err := a.WorkDir(h.cwd)
	if err != nil {
		return err
	}
	mode, err := tf.PermissionMode(h.perm.Mode)
	if err != nil {
		return err
	}
	if mode != "" {
		h.perm.Mode = string(mode)
	}
	h.perm.Disallowed = append(h.perm.Disallowed, tf.DisallowedTools...)
	approver, closeAudit, err := h.perm.Approver(a.App, cwd)
	if err != nil {
		return err
	}
	defer closeAudit()
	if err := a.mainCheckoutRules(approver, cwd); err != nil {
		return err
	}
	model, err := h.model.Open(a.Getenv)
	if err != nil {
		return fmt.Errorf("teammate %s: %w", tf.AgentID, err)
	}
	if model, err = a.meterPane(h, cwd, tf.ParentSessionID, tf.AgentName, model); err != nil { // budget.go
		return err
	}
	sess, err := a.Open()
	if err != nil {
		return err
	}
	defer sess.Release()
	ctx := cmd.Context()
	cfg, member, err := paneMember(ctx, sess, h)
	if err != nil {
		return err
	}
	// procs.go: the groups this teammate starts are recorded, so that its
	// lead kills them if this process dies.
	closeProcs, err := a.keepProcs(member.AgentID, tf.ParentSessionID)
	defer closeProcs()
	if err != nil {
		return err
	}
	trust := leadTrust(tf.LeadKey)
	errOut, logLine, closeLog, err := a.teammateLog(cfg.Name, member.Name)
	if err != nil {
		return err
	}
	defer closeLog()
	a.warnUntrusted(cwd, errOut) // trust.go: its lead trusted the folder, or the folder's files are left out
	leadMode := paneMode(cfg, member.Name, approver, errOut)
	member.Mode = string(approver.Mode)
	var tm *swarm.Teammate
	closeAll, err := a.paneServices(ctx, cwd, cmp.Or(tf.ParentSessionID, tf.AgentID), approver, errOut)
	defer closeAll()
	if err != nil {
		return err
	}
	ac := a.newAgentContext(cwd, cmp.Or(member.Model, model.Info().Model), h.noInstr, approver)
	var tx *kit.Transcripts
	if tf.ParentSessionID != "" {
		tx = a.transcriptsFor(tf.ParentSessionID) // beside the lead's
	}
	tm, cleanup, err := kit.Teammate(kit.TeammateConfig{Stores: kitStores(sess.Stores), Team: cfg.Name, Member: member, Cwd: cwd, Model: model, Context: ac, Transcripts: tx,
		Base: approver, Ceiling: func() permission.Mode { return leadMode }, Planned: tf.PlanModeRequired || member.PlanModeRequired, Now: a.Now, Trust: trust, AskTimeout: h.teams.ask,
		Asker:   approve.AskerFunc(func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) { return tm.Ask(ctx, req) }),
		OnEvent: logLine, OnAgentEvent: kit.ToolTimeline(member.Name, a.Now, logLine),
		Telemetry: a.tel.mate(member.Name, cmp.Or(member.Model, model.Info().Model))})
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(errOut, "troupe teammate %s (%s) joined team %q in %s\n", member.Name, model.Info().Model, cfg.Name, cwd)
	a.joined = true                               // from here an end is the lead's to see, not a failure to start
	runCtx, stopWatch := a.watchLead(ctx, errOut) // leadgone.go
	err = tm.Run(runCtx)
	stopWatch()
	if gone := (*leadGoneError)(nil); errors.As(context.Cause(runCtx), &gone) && ctx.Err() == nil {
		leaveForGoneLead(sess.Stores, cfg.Name, member.Name, gone, errOut)
		leadGone = true
		return nil
	}
	if err != nil {
		fmt.Fprintf(errOut, "teammate %s ended: %v\n", member.Name, err)
		return fmt.Errorf("teammate %s: %w", tf.AgentID, err)
	}
	fmt.Fprintf(errOut, "teammate %s shut down\n", member.Name)
	return nil
}

// paneServices starts what a pane teammate's agents use besides the
// stores: the settings' hooks (warnings to errOut), its own MCP servers,
// and its telemetry. closeAll stops what was started, also after an error.
func (a *app) paneServices(ctx context.Context, cwd, session string, approver *approve.Approver, errOut io.Writer) (closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	hs, err := a.openHooks(cwd, session, approver.Audit, errOut) // hooks.go
	if err != nil {
		return closeAll, err
	}
	approver.PermissionHook = hs.PermissionHook()
	closeMCP, err := a.startMCP(ctx, cwd) // mcp.go: a pane teammate's own servers
	if err != nil {
		return closeAll, err
	}
	closers = append(closers, closeMCP)
	flushTel, err := a.paneTelemetry(ctx) // telemetry.go
	if err != nil {
		return closeAll, err
	}
	closers = append(closers, flushTel)
	return closeAll, nil
}

// claudeCodeHome makes Claude Code's root the home of a teammate that a
// Claude Code lead launched (CLAUDE_CODE_TEAMMATE_COMMAND) when nothing
// names another: the team lives there.
func (a *app) claudeCodeHome() {
	if a.HomeFlag != "" || a.Getenv("TROUPE_HOME") != "" || a.Getenv("TROUPE_STORE") != "" || a.Getenv("CLAUDECODE") != "1" {
		return
	}
	a.HomeFlag = cmp.Or(a.Getenv("CLAUDE_CONFIG_DIR"), "~/.claude")
}

// leadTrust returns the check that a frame claiming to be the lead's is
// signed with its key; nil (every frame trusted) without a key.
func leadTrust(k *mailbox.LeadVerifyKey) func(mailbox.Message) bool {
	if k == nil {
		return nil
	}
	return func(msg mailbox.Message) bool {
		forged, err := mailbox.Forged(k, msg)
		return err == nil && !forged
	}
}

// paneMode narrows a pane teammate's permission mode (approver.Mode, from
// its --permission-mode, else the settings' defaultMode) to the narrowest
// of it, its member's mode in the team file and its lead's mode recorded
// there (permission.ChildMode), saying so on errOut when that narrowed it:
// neither a command line nor a team file alone can widen a teammate's
// permissions. It returns the lead's mode ("" when the team file holds
// none: a team of Claude Code's or of an older troupe), the bound of any
// later change (an approved plan).
func paneMode(cfg team.Config, self string, approver *approve.Approver, errOut io.Writer) permission.Mode {
	mode := permission.ChildMode(permission.ModeBypass, approver.Mode)
	var leadMode permission.Mode
	var why []string
	if lead, ok := cfg.Member(team.LeadName); ok && lead.Mode != "" {
		leadMode = permission.ChildMode(permission.ModeBypass, permission.Mode(lead.Mode))
	}
	bounds := []struct {
		what string
		mode string
	}{{"its entry in the team file", ""}, {"its lead's", string(leadMode)}}
	if m, ok := cfg.Member(self); ok {
		bounds[0].mode = m.Mode
	}
	for _, b := range bounds {
		if b.mode == "" {
			continue
		}
		if n := permission.ChildMode(permission.Mode(b.mode), mode); n != mode {
			why = append(why, fmt.Sprintf("%s is %s", b.what, b.mode))
			mode = n
		}
	}
	if mode != approver.Mode {
		fmt.Fprintf(errOut, "troupe: warning: teammate %s of team %s was started in permission mode %s; it runs in %s, since %s: a teammate never runs in a wider mode than its lead or its team file give\n",
			self, cfg.Name, approver.Mode, mode, strings.Join(why, " and "))
	}
	approver.Mode = mode
	return leadMode
}

// paneMember returns the team of a pane teammate and its roster entry,
// with the color, model and mode its flags give.
func paneMember(ctx context.Context, sess *cli.Opened, h *headless) (team.Config, team.Member, error) {
	tf := h.teams.mate
	cfg, err := sess.Teams.Get(ctx, tf.TeamName)
	if err != nil {
		return team.Config{}, team.Member{}, fmt.Errorf("teammate %s: team %q in %s: %w", tf.AgentID, tf.TeamName, sess.Where, err)
	}
	m, ok := cfg.Member(tf.AgentName)
	if !ok {
		return team.Config{}, team.Member{}, fmt.Errorf("teammate %s: team %q has no member %q (members: %s)", tf.AgentID, tf.TeamName, tf.AgentName, strings.Join(cfg.Names(), ", "))
	}
	member := *m
	if tf.AgentColor != "" {
		member.Color = tf.AgentColor
	}
	if h.model.Name != "" {
		member.Model = h.model.Name
	}
	if h.perm.Mode != "" {
		member.Mode = h.perm.Mode // the flag the lead started it with
	}
	return cfg, member, nil
}

// teammateLog returns where a pane teammate writes: the pane, and a log
// under the home (<home>/logs/<team>/<name>.log) that keeps the timeline
// after the pane has closed; logLine writes one timeline event there.
func (a *app) teammateLog(teamName, name string) (out io.Writer, logLine func(swarm.Event), closeLog func(), err error) {
	out, closeLog = a.Stderr, func() {}
	localHome, err := a.Home() // the local folder, whatever the store
	if err != nil {
		return nil, nil, nil, err
	}
	logDir := filepath.Join(localHome, "logs", team.SanitizePath(teamName))
	if err := os.MkdirAll(logDir, 0o700); err == nil {
		if f, err := os.OpenFile(filepath.Join(logDir, team.SanitizePath(name)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			closeLog = func() { f.Close() }
			out = io.MultiWriter(a.Stderr, f)
		}
	}
	var mu sync.Mutex // events come from many goroutines
	logLine = func(e swarm.Event) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "%s %-10s %s\n", e.Time.Format("15:04:05.000"), termtext.Line(e.Agent), termtext.Clean(e.Text))
	}
	return out, logLine, closeLog, nil
}

// mainCheckoutRules adds to the approver of a pane teammate working in a
// linked worktree (its own, made by the lead) the deny and ask rules of
// the project settings of the repository's main checkout, where the lead
// runs: the worktree holds only the committed copy of those files, not
// the main checkout's .claude/settings.local.json. kit.Teammate then
// anchors them in the worktree too (kit.FollowWorktree). Allow rules are
// not taken: they would widen what the worktree's own settings allow.
func (a *app) mainCheckoutRules(approver *approve.Approver, cwd string) error {
	main, _, ok := worktree.Checkout(cwd)
	if !ok {
		return nil
	}
	userHome, err := a.HomeDir()
	if err != nil {
		userHome = ""
	}
	s, err := settings.Load(settings.Files("", main), userHome)
	if err != nil {
		return fmt.Errorf("permission settings of the main checkout %s: %w", main, err)
	}
	approver.Policy.Deny = append(slices.Clone(approver.Policy.Deny), s.Deny...)
	approver.Policy.Ask = append(slices.Clone(approver.Policy.Ask), s.Ask...)
	return nil
}
