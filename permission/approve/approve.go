// Package approve connects the permission policy to the agent loop: its
// Approver implements agent.Approver by building a permission.Request for
// each tool call, deciding it with permission.Policy.Check, handing "ask"
// decisions to an Asker and recording every outcome in an optional audit
// log.
//
// It lives outside package permission because permission is vocabulary
// (standard library only) and agent is not.
package approve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/audit"
)

// AskRequest is a tool call the policy wants a person (or a program) to
// decide.
type AskRequest struct {
	Agent     string
	Tool      string
	ToolUseID string
	Input     json.RawMessage
	Cwd       string
	Dirs      []string
	Mode      permission.Mode
	// Reason is why the policy asks; Rule is the ask rule, nil when the
	// mode or a built-in judgement asked.
	Reason string
	Rule   *permission.Rule
}

// Answer is an Asker's decision.
type Answer struct {
	Allow bool
	// Message is shown to the model when the call is denied, and
	// recorded in the audit log either way.
	Message string
	// UpdatedInput replaces the tool input when set (allow only); it
	// must be a JSON object.
	UpdatedInput json.RawMessage
}

// Asker decides the calls the policy asks about. An error that is not
// the context's denies the call with the error as the reason.
type Asker interface {
	Ask(ctx context.Context, req AskRequest) (Answer, error)
}

// AskerFunc adapts a function to Asker.
type AskerFunc func(ctx context.Context, req AskRequest) (Answer, error)

// Ask implements Asker.
func (f AskerFunc) Ask(ctx context.Context, req AskRequest) (Answer, error) { return f(ctx, req) }

// Approver implements agent.Approver with a permission.Policy. Its fields
// must not change once it is in use; it is then safe for concurrent use.
type Approver struct {
	Policy permission.Policy
	Agent  string          // who: recorded in the audit log and passed to the Asker
	Cwd    string          // the agent's working directory (absolute)
	Dirs   []string        // further allowed directories (absolute)
	Mode   permission.Mode // empty is default
	// Asker answers "ask" decisions; nil denies them, with the policy's
	// reason followed by Hint's text when Hint is set (such as which flag
	// or rule would allow the call).
	Asker Asker
	Hint  func(AskRequest) string
	// PermissionHook, when set, may decide an ask before the Asker is
	// asked (the user's PermissionRequest hooks); decided false leaves it
	// to the Asker (or to the denial when there is none).
	PermissionHook func(ctx context.Context, req AskRequest) (ans Answer, decided bool)
	// Audit, when set, receives one entry per decision. A failure to
	// record fails the call (Approve returns the error): nothing runs
	// unaudited.
	Audit *audit.Log
	// Now stamps audit entries; nil means time.Now.
	Now func() time.Time
}

var _ agent.Approver = (*Approver)(nil)

// Approve implements agent.Approver.
func (a *Approver) Approve(ctx context.Context, r agent.Request) (agent.Verdict, error) {
	req := permission.Request{Tool: r.Tool, Input: r.Input, Cwd: a.Cwd, Dirs: a.Dirs, Mode: a.Mode, ReadOnly: r.ReadOnly}
	if req.Mode == "" {
		req.Mode = permission.ModeDefault
	}
	d := hookDecision(a.Policy, req, r.Hook, a.Policy.Check(req))
	var v agent.Verdict
	switch d.Behavior {
	case permission.Allow:
		v = agent.Verdict{Allow: true}
	case permission.Deny:
		v = agent.Verdict{Reason: DenyReason(d)}
	default: // ask
		var err error
		v, d, err = a.ask(ctx, r, req, d)
		if err != nil {
			return agent.Verdict{}, err
		}
	}
	if a.Audit != nil {
		now := time.Now
		if a.Now != nil {
			now = a.Now
		}
		if err := a.Audit.Record(audit.NewEntry(now(), a.Agent, req, d)); err != nil {
			return agent.Verdict{}, err
		}
	}
	return v, nil
}

// ask hands an ask decision to the Asker and returns the verdict and the
// final decision to audit.
func (a *Approver) ask(ctx context.Context, r agent.Request, req permission.Request, d permission.Decision) (agent.Verdict, permission.Decision, error) {
	final := d
	ar := AskRequest{Agent: a.Agent, Tool: r.Tool, ToolUseID: r.ToolUseID, Input: r.Input,
		Cwd: a.Cwd, Dirs: a.Dirs, Mode: req.Mode, Reason: d.Reason, Rule: d.Rule}
	var ans Answer
	decided := false
	if a.PermissionHook != nil {
		ans, decided = a.PermissionHook(ctx, ar)
	}
	if !decided && a.Asker == nil {
		final.Behavior = permission.Deny
		final.Reason = d.Reason
		if a.Hint != nil {
			if h := a.Hint(ar); h != "" {
				final.Reason += "; " + h
			}
		}
		return agent.Verdict{Reason: DenyReason(final)}, final, nil
	}
	if !decided {
		var err error
		if ans, err = a.Asker.Ask(ctx, ar); err != nil {
			if ctx.Err() != nil {
				return agent.Verdict{}, d, err // interrupted: the call does not run
			}
			final.Behavior = permission.Deny
			final.Reason = err.Error()
			return agent.Verdict{Reason: err.Error()}, final, nil
		}
	}
	if ans.Allow && len(ans.UpdatedInput) > 0 {
		var obj map[string]json.RawMessage
		if json.Unmarshal(ans.UpdatedInput, &obj) != nil || obj == nil {
			ans = Answer{Message: fmt.Sprintf("the approval's updated input is not a JSON object: %.200s", ans.UpdatedInput)}
		}
	}
	if ans.Allow {
		final.Behavior = permission.Allow
		final.Reason = joinReason(d.Reason, "approved", ans.Message)
		return agent.Verdict{Allow: true, UpdatedInput: ans.UpdatedInput}, final, nil
	}
	final.Behavior = permission.Deny
	msg := ans.Message
	if msg == "" {
		msg = "denied when asked"
	}
	final.Reason = joinReason(d.Reason, "denied", ans.Message)
	return agent.Verdict{Reason: msg}, final, nil
}

func joinReason(asked, outcome, msg string) string {
	s := asked + "; asked: " + outcome
	if msg != "" {
		s += ": " + msg
	}
	return s
}

// DenyReason is the reason a denied call gives the model: the decision's
// reason and, when a rule decided, the rule and its file:
// "<reason> (rule <rule> from <file>)".
func DenyReason(d permission.Decision) string {
	if d.Rule == nil {
		return d.Reason
	}
	src := d.Rule.Source
	if src == "" {
		src = "built-in rules"
	}
	return fmt.Sprintf("%s (rule %s from %s)", d.Reason, d.Rule, src)
}

// Confine implements the file tools' last look (tool/filetool Config.Confine):
// a tool named tool was approved to use the path abs but opened (or will
// write) real, where abs really points now. It refuses when the policy
// judges real more strictly (ask or deny) than abs as written: a link
// swapped in after the check, or one leading outside the working
// directories or to a protected path. Nothing is asked; a nil Approver
// refuses nothing.
func (a *Approver) Confine(tool, abs, real string) error {
	if a == nil {
		return nil
	}
	lexical := a.Policy
	lexical.Realpath = nil
	was := lexical.Check(a.fileRequest(tool, abs))
	now := a.Policy.Check(a.fileRequest(tool, real))
	if strictness(now.Behavior) > strictness(was.Behavior) {
		return fmt.Errorf("%s", DenyReason(now))
	}
	return nil
}

// Withholds reports whether the policy's Read deny rules cover abs (as
// written or where it really points), for the file tools to keep it out
// of Glob and Grep results (tool/filetool Config.Withhold). A nil Approver
// withholds nothing.
func (a *Approver) Withholds(abs string) bool {
	return a != nil && a.Policy.DeniesRead(abs, a.Cwd)
}

// fileRequest is the request of tool for path p.
func (a *Approver) fileRequest(tool, p string) permission.Request {
	key := "file_path"
	if tool == "Glob" || tool == "Grep" {
		key = "path"
	}
	in, _ := json.Marshal(map[string]string{key: p})
	return permission.Request{Tool: tool, Input: in, Cwd: a.Cwd, Dirs: a.Dirs, Mode: a.Mode}
}

func strictness(b permission.Behavior) int {
	switch b {
	case permission.Allow:
		return 0
	case permission.Ask:
		return 1
	}
	return 2
}

// hookDecision applies a PreToolUse hook's decision to the policy's d. A
// hook's allow counts as an allow rule for the whole tool, so it skips
// the question but never beats what comes before allow rules: a deny or
// ask rule, a protected path, plan mode. A hook's ask turns an allow into
// a question.
func hookDecision(p permission.Policy, req permission.Request, hook string, d permission.Decision) permission.Decision {
	switch {
	case hook == "allow" && d.Behavior == permission.Ask && d.Rule == nil:
		p.Allow = append(slices.Clip(p.Allow), permission.Rule{Tool: req.Tool, Source: "PreToolUse hook"})
		if p.Check(req).Behavior == permission.Allow {
			return permission.Decision{Behavior: permission.Allow, Reason: "allowed by a PreToolUse hook"}
		}
	case hook == "ask" && d.Behavior == permission.Allow:
		return permission.Decision{Behavior: permission.Ask, Rule: d.Rule, Reason: "a PreToolUse hook asks for approval"}
	}
	return d
}
