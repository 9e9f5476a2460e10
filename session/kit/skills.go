package kit

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/internal/realpath"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/tool"

	"github.com/troupe-dev/troupe/tool/skilltool"
)

// skillScope narrows one agent's calls to the allowed-tools of the skill
// it loaded, from the Skill call until its run ends: a call no entry
// covers is refused, naming the skill and what it allows. The entries
// are permission rules ("Read", "Bash(git diff:*)", "mcp__srv__tool"),
// matched as allow rules are; a covered call still passes the agent's
// own permissions (a skill narrows, it never widens). Skill itself always
// runs, so that another skill can be loaded.
type skillScope struct {
	policy permission.Policy // Shell, Home and Realpath; Allow set per skill
	cwd    string

	mu    sync.Mutex
	name  string // the active skill; "" when none
	rules []permission.Rule
	bad   []string // entries that are not rules: nothing they name runs
}

// load makes s the active skill (a skill without allowed-tools lifts
// the narrowing).
func (sc *skillScope) load(_ context.Context, s skilltool.Skill) {
	var rules []permission.Rule
	var bad []string
	for _, text := range s.AllowedTools {
		r, err := permission.ParseRule(text)
		if err != nil {
			bad = append(bad, text)
			continue
		}
		rules = append(rules, r)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.name, sc.rules, sc.bad = "", nil, nil
	if len(s.AllowedTools) > 0 {
		sc.name, sc.rules, sc.bad = s.Name, rules, bad
	}
}

// end ends the narrowing (a new run, or the run's end).
func (sc *skillScope) end() {
	sc.mu.Lock()
	sc.name, sc.rules, sc.bad = "", nil, nil
	sc.mu.Unlock()
}

// refuses reports why the active skill does not allow req; "" when it
// does or no skill narrows.
func (sc *skillScope) refuses(req agent.Request) string {
	sc.mu.Lock()
	name, rules, bad := sc.name, sc.rules, sc.bad
	sc.mu.Unlock()
	if name == "" || req.Tool == "Skill" {
		return ""
	}
	p := sc.policy
	p.Allow, p.Ask, p.Deny = rules, nil, nil
	d := p.Check(permission.Request{Tool: req.Tool, Input: req.Input, Cwd: sc.cwd, Mode: permission.ModeDefault})
	if d.Behavior == permission.Allow && d.Rule != nil {
		return ""
	}
	var allowed []string
	for _, r := range rules {
		allowed = append(allowed, r.String())
	}
	why := fmt.Sprintf("%s is not among the tools the skill %q allows (%s); until this turn ends only those run. Use them, or finish the skill's task and say what else is needed.",
		req.Tool, name, strings.Join(allowed, ", "))
	if len(bad) > 0 {
		why += fmt.Sprintf(" (Its allowed-tools also has entries that are not tool rules and allow nothing: %s.)", strings.Join(bad, ", "))
	}
	return why
}

// skillApprover refuses what the active skill does not allow, then asks
// the agent's own approver.
type skillApprover struct {
	agent.Approver
	scope *skillScope
}

// Approve implements agent.Approver.
func (a skillApprover) Approve(ctx context.Context, req agent.Request) (agent.Verdict, error) {
	if why := a.scope.refuses(req); why != "" {
		return agent.Verdict{Reason: why}, nil
	}
	if a.Approver == nil {
		return agent.Verdict{Allow: true}, nil
	}
	return a.Approver.Approve(ctx, req)
}

// skillHooks ends the narrowing when a run starts or stops, then runs
// the agent's own hooks.
type skillHooks struct {
	inner agent.Hooks
	scope *skillScope
}

// Hook implements agent.Hooks.
func (h skillHooks) Hook(ctx context.Context, e agent.HookEvent) agent.HookResult {
	switch e.Name {
	case agent.HookUserPromptSubmit, agent.HookStop:
		h.scope.end()
	}
	if h.inner == nil {
		return agent.HookResult{}
	}
	return h.inner.Hook(ctx, e)
}

// NarrowBySkills gives cfg's agent a skill scope of its own when one of
// the skills its Skill tool offers has allowed-tools: the Skill tool
// starts the narrowing, the approver enforces it, the hooks end it with
// the run. Entries are matched in the agent's working folder. Without
// such skills cfg is returned as is.
func (ac *Context) NarrowBySkills(cfg agent.Config) (agent.Config, error) {
	if cfg.Tools == nil || ac == nil {
		return cfg, nil
	}
	t, ok := cfg.Tools.Get("Skill")
	st, isSkill := t.(*skilltool.Tool)
	if !ok || !isSkill || !anyAllowedTools(st.Skills()) {
		return cfg, nil
	}
	sc := &skillScope{policy: permission.Policy{Shell: shell.Parse, Realpath: realpath.Resolve, Stat: realpath.Stat, Home: ac.userHome}, cwd: ac.cwd}
	var ts []tool.Tool
	for _, name := range cfg.Tools.Names() {
		t, _ := cfg.Tools.Get(name)
		if name == "Skill" {
			t = st.OnLoad(sc.load)
		}
		ts = append(ts, t)
	}
	tools, err := tool.NewRegistry(ts...)
	if err != nil {
		return cfg, err
	}
	cfg.Tools = tools
	cfg.Approver = skillApprover{Approver: cfg.Approver, scope: sc}
	cfg.Hooks = skillHooks{inner: cfg.Hooks, scope: sc}
	return cfg, nil
}

func anyAllowedTools(ss []skilltool.Skill) bool {
	for _, s := range ss {
		if len(s.AllowedTools) > 0 {
			return true
		}
	}
	return false
}
