package swarm

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
)

// TeamTools are the coordination tools every member may call without
// asking: they only touch the team's mailboxes and task list (and
// ListAgents reads who can be messaged). Deny rules
// still refuse them.
var TeamTools = []string{"SendMessage", "ListAgents", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "ExitPlanMode", "TeamCreate", "TeamDelete"}

// planTools may run in plan mode: talking to the team or the person,
// reading the list, and submitting the plan.
var planTools = []string{"SendMessage", "TaskGet", "TaskList", "ExitPlanMode", ask.ToolName}

// Approver is a teammate's permission layer: an approve.Approver whose
// mode and allow rules change while it runs (plan approved, "allow always"
// answers), copy-on-write so that a decision in flight sees one state.
// It is safe for concurrent use.
type Approver struct {
	mu  sync.Mutex // serializes changes
	cur atomic.Pointer[approve.Approver]
	// ceiling, when set, is the widest mode of the moment (the lead's):
	// each call is judged in the narrower of it and the current mode.
	ceiling atomic.Pointer[func() permission.Mode]
}

// SetCeiling bounds every later call by the mode c returns at the time
// of the call (permission.ChildMode); c returning "" bounds nothing. An
// in-process teammate is under its lead's mode of the moment: a lead
// narrowed from bypassPermissions to default takes it down too.
func (a *Approver) SetCeiling(c func() permission.Mode) { a.ceiling.Store(&c) }

// now returns the state a call is judged in: the current one, its mode
// narrowed to the ceiling's.
func (a *Approver) now() *approve.Approver {
	cur := a.cur.Load()
	if c := a.ceiling.Load(); c != nil && *c != nil {
		if top := (*c)(); top != "" {
			if m := permission.ChildMode(top, cur.Mode); m != cur.Mode {
				n := *cur
				n.Mode = m
				return &n
			}
		}
	}
	return cur
}

// NewApprover returns an Approver starting from base (which it copies),
// with allow rules for TeamTools added.
func NewApprover(base *approve.Approver) *Approver {
	c := *base
	c.Policy.Allow = slices.Clone(c.Policy.Allow)
	for _, t := range TeamTools {
		c.Policy.Allow = append(c.Policy.Allow, permission.Rule{Tool: t, Source: "team"})
	}
	a := &Approver{}
	a.cur.Store(&c)
	return a
}

// Approve implements agent.Approver.
func (a *Approver) Approve(ctx context.Context, r agent.Request) (agent.Verdict, error) {
	cur := a.now()
	if cur.Mode == permission.ModePlan && slices.Contains(planTools, r.Tool) {
		r.ReadOnly = true // these only talk to the team
	}
	return cur.Approve(ctx, r)
}

// Mode returns the current mode.
func (a *Approver) Mode() permission.Mode { return a.now().Mode }

// SetMode switches the mode.
func (a *Approver) SetMode(mode string) error {
	m, err := permission.ParseMode(mode)
	if err != nil {
		return err
	}
	a.update(func(c *approve.Approver) { c.Mode = m })
	return nil
}

// Chdir moves the folder calls are judged against (relative paths, what
// is inside the working folder) to dir, with the policy follow returns
// from the current one (nil keeps it): a lead that moved into a worktree
// of its project (EnterWorktree).
func (a *Approver) Chdir(dir string, follow func(permission.Policy) permission.Policy) {
	a.update(func(c *approve.Approver) {
		c.Cwd = dir
		if follow != nil {
			c.Policy = follow(c.Policy)
		}
	})
}

// AddAllowRules adds allow rules (rule strings that do not parse are
// reported and left out).
func (a *Approver) AddAllowRules(rules []string) error {
	var add []permission.Rule
	var bad error
	for _, s := range rules {
		r, err := permission.ParseRule(s)
		if err != nil {
			bad = fmt.Errorf("rule %q: %w", s, err)
			continue
		}
		r.Source = "team"
		add = append(add, r)
	}
	a.update(func(c *approve.Approver) { c.Policy.Allow = append(slices.Clone(c.Policy.Allow), add...) })
	return bad
}

// Rules returns the rules in force: allow, ask and deny.
func (a *Approver) Rules() (allow, ask, deny []permission.Rule) {
	c := a.cur.Load()
	return slices.Clone(c.Policy.Allow), slices.Clone(c.Policy.Ask), slices.Clone(c.Policy.Deny)
}

// AddRule adds one rule of behavior b, recorded as coming from source.
func (a *Approver) AddRule(b permission.Behavior, rule, source string) error {
	r, err := permission.ParseRule(rule)
	if err != nil {
		return fmt.Errorf("rule %q: %w", rule, err)
	}
	r.Source = source
	var bad error
	a.update(func(c *approve.Approver) {
		switch b {
		case permission.Allow:
			c.Policy.Allow = append(slices.Clone(c.Policy.Allow), r)
		case permission.Ask:
			c.Policy.Ask = append(slices.Clone(c.Policy.Ask), r)
		case permission.Deny:
			c.Policy.Deny = append(slices.Clone(c.Policy.Deny), r)
		default:
			bad = fmt.Errorf("unknown behavior %q: want allow, ask or deny", b)
		}
	})
	return bad
}

// RemoveRule takes every rule of behavior b written as rule out of force
// and returns the sources they came from (none: no such rule).
func (a *Approver) RemoveRule(b permission.Behavior, rule string) ([]string, error) {
	r, err := permission.ParseRule(rule)
	if err != nil {
		return nil, fmt.Errorf("rule %q: %w", rule, err)
	}
	var sources []string
	drop := func(list []permission.Rule) []permission.Rule {
		return slices.DeleteFunc(slices.Clone(list), func(x permission.Rule) bool {
			if x.String() == r.String() {
				sources = append(sources, x.Source)
				return true
			}
			return false
		})
	}
	var bad error
	a.update(func(c *approve.Approver) {
		switch b {
		case permission.Allow:
			c.Policy.Allow = drop(c.Policy.Allow)
		case permission.Ask:
			c.Policy.Ask = drop(c.Policy.Ask)
		case permission.Deny:
			c.Policy.Deny = drop(c.Policy.Deny)
		default:
			bad = fmt.Errorf("unknown behavior %q: want allow, ask or deny", b)
		}
	})
	return sources, bad
}

func (a *Approver) update(fn func(*approve.Approver)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := *a.cur.Load()
	fn(&c)
	a.cur.Store(&c)
}

// Confine implements tool/filetool Config.Confine with the current state (see
// approve.Approver.Confine).
func (a *Approver) Confine(tool, abs, real string) error {
	if a == nil {
		return nil
	}
	return a.cur.Load().Confine(tool, abs, real)
}

// Withholds implements tool/filetool Config.Withhold with the current state
// (see approve.Approver.Withholds).
func (a *Approver) Withholds(abs string) bool {
	return a != nil && a.cur.Load().Withholds(abs)
}

// NamesHost implements tool/webtool's FetchConfig.Allows with the current
// state (see approve.Approver.NamesHost).
func (a *Approver) NamesHost(host string) bool {
	return a != nil && a.cur.Load().NamesHost(host)
}
