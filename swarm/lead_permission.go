package swarm

import (
	"cmp"
	"context"
	"fmt"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/team"
)

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

// RegisterInterrupt lets the lead abort an in-process teammate's current
// turn (InterruptMate).
func (l *Lead) RegisterInterrupt(name string, interrupt func() bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.mates[name]; m != nil {
		m.interrupt = interrupt
	}
}

// InterruptMate aborts teammate name's current turn, leaving it running:
// it takes its next message or task as usual. It reports whether a turn
// was running. A teammate in a pane of its own is interrupted there.
func (l *Lead) InterruptMate(name string) (bool, error) {
	l.mu.Lock()
	m := l.mates[name]
	l.mu.Unlock()
	switch {
	case m == nil:
		return false, fmt.Errorf("no teammate %q in the lead's team", name)
	case m.interrupt == nil:
		return false, fmt.Errorf("%s runs in a pane of its own (%s): interrupt it there, or stop it", name, m.info.Backend)
	}
	return m.interrupt(), nil
}

// inProcess reports whether teammate name runs in the lead's process.
func (l *Lead) inProcess(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.mates[name]
	return m != nil && m.info.Backend == team.BackendInProcess
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
	return approve.Answer{Allow: ans.Allow, Message: ans.Message, UpdatedInput: ans.UpdatedInput}, nil
}

// decide answers one question: from the team's allow-always rules when
// one covers it, else from the Answerer (one question at a time). It
// returns the rules the answer added.
func (l *Lead) decide(ctx context.Context, a PermissionAsk) (PermissionAnswer, []string, error) {
	if a.Tool == ask.ToolName { // a question for the person, not a permission
		ans, err := l.askPerson(ctx, a)
		return ans, nil, err
	}
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
	case ans.Allow && ans.Always && cmp.Or(ans.Rule, ExactRule(a.Tool, a.Input)) == "":
		l.event(a.Worker, EventPermission, what+": allowed once (no rule names exactly this call, so none was added for the team)")
	case ans.Allow && ans.Always:
		rule := cmp.Or(ans.Rule, ExactRule(a.Tool, a.Input))
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
		l.sharePath(ctx, a.Worker, rule)
		l.event(a.Worker, EventPermission, what+": allowed always ("+rule+", for the whole team)")
	case ans.Allow:
		l.event(a.Worker, EventPermission, what+": allowed once")
	default:
		l.event(a.Worker, EventPermission, what+": denied"+feedback(ans.Message))
	}
	return ans, added, nil
}

// sharePath records a folder rule of a file tool ("Edit(//abs/dir/**)")
// in the team file's teamAllowedPaths, the seed's place for team-wide path
// permissions, which every teammate reads at its start and pane teammates
// follow (session/kit's followTeamPaths); a Claude Code teammate reads it
// too. Other rules stay the lead's and its in-process teammates'.
func (l *Lead) sharePath(ctx context.Context, worker, rule string) {
	p, ok := TeamPath(rule)
	if !ok {
		return
	}
	p.AddedBy, p.AddedAt = worker, l.cfg.Now().UnixMilli()
	_, err := l.cfg.Teams.Update(ctx, l.Team(), func(c *team.Config) error {
		for _, q := range c.TeamAllowedPaths {
			if q.Path == p.Path && q.ToolName == p.ToolName {
				return nil
			}
		}
		c.TeamAllowedPaths = append(c.TeamAllowedPaths, p)
		return nil
	})
	if err != nil {
		l.event(worker, EventWarning, "could not record "+rule+" in the team file's teamAllowedPaths: "+err.Error())
	}
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
	if f.ToolName == ask.ToolName {
		l.answerQuestionMail(ctx, teamName, m, f)
		return
	}
	ans, rules, err := l.decide(ctx, PermissionAsk{Worker: m.From, Color: m.Color, Tool: f.ToolName, ToolUseID: f.ToolUseID,
		Input: f.Input, Description: f.Description})
	var resp mailbox.PermissionResponse
	if err == nil {
		resp, err = Verdict(f, ans.Allow, rules, ans.Message)
	}
	if err != nil {
		resp = mailbox.PermissionResponse{RequestID: f.RequestID, ToolUseID: f.ToolUseID, Subtype: "error",
			Error: "the team lead could not answer: " + err.Error()}
	}
	text, err := mailbox.Encode(resp)
	if err == nil {
		_, err = l.cfg.Mail.Send(ctx, teamName, m.From, mailbox.Message{From: team.LeadName, Text: text}) // a verdict is taken by the turn that waits for it: not owed
	}
	if err != nil && ctx.Err() == nil {
		l.cfg.Log.Warn("answer a permission request", "agent", m.From, "err", err)
	}
}
