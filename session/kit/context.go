package kit

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/memory"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool/skilltool"
	"github.com/troupe-dev/troupe/tool/tasktool"
	"github.com/troupe-dev/troupe/tool/toolsearch"
	"github.com/troupe-dev/troupe/worktree"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/tool"
)

// Context is what one agent is told besides its task: the project
// instructions of its working folder, its skills and its environment
// (package brief). One per agent: it remembers which subfolders' files
// that agent has been given.
type Context struct {
	cwd       string
	userHome  string // for ~/ in skills' allowed-tools
	model     string
	loader    *brief.Loader // nil with --no-project-instructions
	instr     *brief.Instructions
	skills    []brief.Skill
	agents    []brief.Agent // the agent types subagent_type selects (agents.go)
	memory    string        // the project's memory, for the lead (dream.go)
	now       func() time.Time
	getenv    func(string) string
	hooks     *Hooks      // every agent built on this context runs the hooks (hooks.go)
	mcp       []tool.Tool // the MCP servers' tools (mcp.go)
	webSearch string      // the settings' webSearch.url (web.go)
	// smallModel is the model WebFetch answers on ("" for the agent's
	// own): ANTHROPIC_SMALL_FAST_MODEL or the setting smallModel (web.go).
	smallModel string
	prInterval time.Duration     // the settings' prActivity.intervalSeconds (prtools.go)
	search     toolsearch.Policy // which tools ToolSearch defers (Defer)
	res        tasktool.Resources
	noOutput   bool // taskOutputInContext false: no OutputDigest

	gitMu   sync.Mutex // the last git state read, reused for gitFresh
	gitAt   time.Time
	gitLast brief.Git
	gitErr  error
}

// System returns the stable System prompt of role: custom when given,

// Run is what every agent of one run shares: where the user's and
// troupe's files are, the settings' hooks, the MCP servers' tools, and
// the process's clock, environment and warnings.
type Run struct {
	UserHome   string // the user's home ("" when unknown)
	TroupeHome string // troupe's home: AGENTS.md, skills, agents, memory
	Hooks      *Hooks
	MCP        []tool.Tool
	// Resources lets monitors follow the MCP servers' resources; nil
	// without servers.
	Resources tasktool.Resources
	// NoTaskOutput keeps running shells' new output out of the agents'
	// model input (the setting taskOutputInContext: false).
	NoTaskOutput bool
	Now          func() time.Time
	Getenv       func(string) string
	// Warn reports a problem once a run (a malformed skill, agent
	// definition or memory folder); the agent is built without it.
	Warn func(string)
}

// NewContext loads what an agent working in cwd on model is told: the
// user's instructions (~/.claude/CLAUDE.md, AGENTS.md in troupe's home)
// and those of cwd and the folders above it (none when noInstr), the
// skills, the agent types and the project's memory. Imports are allowed
// where appr would let the agent read without asking.
func (r Run) NewContext(cwd, model string, noInstr bool, appr *approve.Approver) *Context {
	now, getenv, warn := r.Now, r.Getenv, r.Warn
	if now == nil {
		now = time.Now
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if warn == nil {
		warn = func(string) {}
	}
	ac := &Context{cwd: cwd, userHome: r.UserHome, model: model, now: now, getenv: getenv, hooks: r.Hooks, mcp: r.MCP, res: r.Resources, noOutput: r.NoTaskOutput}
	if p, err := SearchPolicy(settings.Files(r.TroupeHome, cwd), getenv); err != nil {
		warn(err.Error())
	} else {
		ac.search = p
	}
	skills, err := brief.LoadSkills(brief.SkillDirs(cwd, r.UserHome, r.TroupeHome))
	if err != nil {
		warn(err.Error())
	}
	ac.skills = skills
	custom, err := r.AgentTypes(cwd)
	if err != nil {
		warn(err.Error())
	}
	ac.agents = brief.WithBuiltins(custom)
	ac.webSearch = searchURL(r.TroupeHome, cwd, warn)               // web.go
	ac.smallModel = smallModelName(r.TroupeHome, cwd, getenv, warn) // web.go
	ac.prInterval = prInterval(r.TroupeHome, cwd, warn)             // prtools.go
	if r.TroupeHome != "" {
		text, err := memory.Load(memory.Dir(r.TroupeHome, cwd), 0)
		if err != nil {
			warn(err.Error())
		}
		ac.memory = text
	}
	if noInstr {
		return ac
	}
	var user []string
	if r.UserHome != "" {
		user = append(user, filepath.Join(r.UserHome, ".claude", "CLAUDE.md"))
	}
	if r.TroupeHome != "" {
		user = append(user, filepath.Join(r.TroupeHome, "AGENTS.md"))
	}
	opts := brief.Options{Cwd: cwd, UserFiles: user}
	if appr != nil {
		opts.Readable = func(path string) bool {
			in, _ := json.Marshal(map[string]string{"file_path": path})
			d := appr.Policy.Check(permission.Request{Tool: "Read", Input: in, Cwd: appr.Cwd, Dirs: appr.Dirs, Mode: appr.Mode})
			return d.Behavior == permission.Allow
		}
	}
	ac.loader = brief.NewLoader(opts)
	ac.instr = ac.loader.Start()
	for _, s := range ac.instr.Sources {
		if s.Content == "" && strings.HasPrefix(s.Note, "not read: it links to") {
			warn(s.Path + ": " + s.Note)
		}
	}
	return ac
}

// AgentTypes loads the agent definitions of the project at cwd and of
// the user (the project's win), without the built-ins. The project's
// lose their permissionMode when the user has not trusted cwd.
func (r Run) AgentTypes(cwd string) ([]brief.Agent, error) {
	return brief.LoadAgents(TrustAgentDirs(brief.AgentDirs(cwd, r.UserHome, r.TroupeHome), cwd, r.TroupeHome))
}

// TrustAgentDirs marks the project's folders of dirs Untrusted when the
// trust store of troupeHome does not trust cwd.
func TrustAgentDirs(dirs []brief.AgentDir, cwd, troupeHome string) []brief.AgentDir {
	if troupeHome == "" || settings.Trust(troupeHome).Trusted(cwd) {
		return dirs
	}
	for i := range dirs {
		if dirs[i].Source == brief.SourceProject {
			dirs[i].Untrusted = true
		}
	}
	return dirs
}

// Instructions returns the project instructions loaded for the agent,
// nil when they are off.
func (ac *Context) Instructions() *brief.Instructions { return ac.instr }

// Agents returns the agent types the Agent tool's subagent_type selects.
func (ac *Context) Agents() []brief.Agent {
	if ac == nil {
		return nil
	}
	return ac.agents
}

// Hooks returns the hooks every agent built on ac runs; nil for none.
func (ac *Context) Hooks() *Hooks {
	if ac == nil {
		return nil
	}
	return ac.hooks
}

// else the role's prompt, followed by the project instructions.
func (ac *Context) System(role string, vars brief.Vars, custom string) (string, error) {
	text := custom
	if text == "" {
		vars.Cwd = ac.cwd
		var err error
		if text, err = brief.Role(role, vars); err != nil {
			return "", err
		}
	}
	stable := withMemory(role, brief.Build(text, ac.instr, "").Stable, ac.memory)
	if list := brief.RenderSkills(ac.skills); list != "" {
		stable += "\n\n" + list
	}
	return stable, nil
}

// SkillTool returns the Skill tool over the context's skills, nil when
// there are none.
func (ac *Context) SkillTool() tool.Tool {
	if ac == nil || len(ac.skills) == 0 {
		return nil
	}
	var ss []skilltool.Skill
	for _, s := range ac.skills {
		ss = append(ss, skilltool.Skill{Name: s.Name, Description: s.Description, Dir: s.Dir(), Body: s.Body, AllowedTools: s.AllowedTools})
	}
	return skilltool.New(ss)
}

// Environment is agent.Config.Environment: the Environment block, read
// again at each run; the git state is read at most every gitFresh (a
// teammate's many short runs do not each run git status on a large tree).
func (ac *Context) Environment(ctx context.Context) string {
	return brief.Environment{Cwd: ac.cwd, Model: ac.model, Now: ac.now(), Git: ac.git, Getenv: ac.getenv}.Render(ctx)
}

// gitFresh is how long a read git state is reused.
const gitFresh = 30 * time.Second

func (ac *Context) git(ctx context.Context, dir string) (brief.Git, error) {
	ac.gitMu.Lock()
	defer ac.gitMu.Unlock()
	now := ac.now()
	if !ac.gitAt.IsZero() && now.Sub(ac.gitAt) < gitFresh && ac.gitErr == nil {
		return ac.gitLast, nil
	}
	ac.gitLast, ac.gitErr = gitState(ctx, dir)
	ac.gitAt = now
	return ac.gitLast, ac.gitErr
}

// Nested returns an agent event hook that hands the agent the
// instructions of a subfolder the first time it reads or edits a file
// there, through send (delivered at its next tool-round boundary).
func (ac *Context) Nested(send func(string)) func(agent.Event) {
	if ac.loader == nil {
		return func(agent.Event) {}
	}
	return func(e agent.Event) {
		if e.Type != agent.EventToolUse || e.Call == nil {
			return
		}
		switch e.Call.Name {
		case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit":
		default:
			return
		}
		var in struct {
			FilePath     string `json:"file_path"`
			NotebookPath string `json:"notebook_path"`
		}
		if json.Unmarshal(e.Call.Input, &in) != nil {
			return
		}
		p := in.FilePath + in.NotebookPath
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(ac.cwd, p)
		}
		if r := ac.loader.Nested(p).Reminder(); r != "" {
			send(r)
		}
	}
}

// gitState reads the git state of dir for the environment block.
func gitState(ctx context.Context, dir string) (brief.Git, error) {
	st, err := worktree.ReadState(ctx, dir)
	return brief.Git{Repo: st.Repo, Branch: st.Branch, Status: st.Status}, err
}

// withMemory appends memory to the stable prompt of the lead.
func withMemory(role, stable, mem string) string {
	if role != brief.RoleLead || mem == "" {
		return stable
	}
	return stable + "\n\n" + mem
}

// MCPTools returns the MCP tools every agent of ac gets; nil when there
// are none.
func (ac *Context) MCPTools() []tool.Tool {
	if ac == nil {
		return nil
	}
	return ac.mcp
}

// Defer returns tools with those ac's tool-search policy defers (the MCP
// tools past its thresholds, the built-ins it names) wrapped by
// tool.Defer, and ToolSearch added when any is (toolsearch.Policy).
func (ac *Context) Defer(tools []tool.Tool) []tool.Tool {
	var p toolsearch.Policy
	if ac != nil {
		p = ac.search
	}
	return p.Apply(tools)
}

// SearchPolicy reads the tool-search policy: the settings key
// "toolSearch", then ENABLE_TOOL_SEARCH.
func SearchPolicy(files []settings.File, getenv func(string) string) (toolsearch.Policy, error) {
	p, file, err := settings.Key[toolsearch.Policy](files, "toolSearch")
	if err != nil {
		return toolsearch.Policy{}, err
	}
	if err := p.Check(); err != nil {
		return toolsearch.Policy{}, fmt.Errorf("%s: %w", file, err)
	}
	return p.WithEnv(getenv("ENABLE_TOOL_SEARCH"))
}

// Resources returns what follows the MCP servers' resources for a
// monitor; nil when there is nothing to follow.
func (ac *Context) Resources() tasktool.Resources {
	if ac == nil {
		return nil
	}
	return ac.res
}

// OutputDigest returns agent.Config.Attach for the agent agentID of reg
// ("" for reg's own agent): what its running background shells printed
// since its last model input (task.OutputDigest); nil when the setting
// taskOutputInContext is false or there is no registry.
func (ac *Context) OutputDigest(reg *task.Registry, agentID string) func() string {
	if reg == nil || (ac != nil && ac.noOutput) {
		return nil
	}
	return reg.NewOutputDigest(agentID).Take
}

// MCPServers returns the names of the MCP servers whose tools ac has,
// for the coordinator's worker prompt.
func (ac *Context) MCPServers() []string {
	var out []string
	for _, t := range ac.MCPTools() {
		rest, ok := strings.CutPrefix(t.Spec().Name, "mcp__")
		if name, _, found := strings.Cut(rest, "__"); ok && found && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
