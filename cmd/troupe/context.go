package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/tool"

	skilltool "github.com/troupe-dev/troupe/tool/skill"
)

// agentContext is what one agent is told besides its task: the project
// instructions of its working folder, its skills and its environment
// (package brief). One per agent: it remembers which subfolders' files
// that agent has been given.
type agentContext struct {
	cwd    string
	model  string
	loader *brief.Loader // nil with --no-project-instructions
	instr  *brief.Instructions
	skills []brief.Skill
	agents []brief.Agent // the agent types subagent_type selects (agents.go)
	memory string        // the project's memory, for the lead (dream.go)
	now    func() time.Time
	getenv func(string) string
	hooks  *hookSet    // every agent built on this context runs the hooks (hooks.go)
	mcp    []tool.Tool // the MCP servers' tools (mcp.go)

	gitMu   sync.Mutex // the last git state read, reused for gitFresh
	gitAt   time.Time
	gitLast brief.Git
	gitErr  error
}

// newAgentContext loads the project instructions for cwd: the user's
// (~/.claude/CLAUDE.md, troupe's <home>/AGENTS.md) and those of cwd and the
// folders above it. Imports are allowed where appr would let the agent
// read without asking.
func (a *app) newAgentContext(cwd, model string, off bool, appr *approve.Approver) *agentContext {
	ac := &agentContext{cwd: cwd, model: model, now: a.Now, getenv: a.Getenv, hooks: a.hooks, mcp: a.mcp.tools}
	userHome, troupeHome := a.userHomes()
	skills, err := brief.LoadSkills(brief.SkillDirs(cwd, userHome, troupeHome))
	if err != nil {
		a.warnOnce(err.Error())
	}
	ac.skills = skills
	ac.agents = a.agentTypes(cwd)
	ac.memory = a.memoryPrompt(cwd)
	if off {
		return ac
	}
	var user []string
	if userHome != "" {
		user = append(user, filepath.Join(userHome, ".claude", "CLAUDE.md"))
	}
	if troupeHome != "" {
		user = append(user, filepath.Join(troupeHome, "AGENTS.md"))
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
	return ac
}

// system returns the stable system prompt of role: custom when given,
// else the role's prompt, followed by the project instructions.
func (ac *agentContext) system(role string, vars brief.Vars, custom string) (string, error) {
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

// skillTool returns the Skill tool over the context's skills, nil when
// there are none.
func (ac *agentContext) skillTool() tool.Tool {
	if ac == nil || len(ac.skills) == 0 {
		return nil
	}
	var ss []skilltool.Skill
	for _, s := range ac.skills {
		ss = append(ss, skilltool.Skill{Name: s.Name, Description: s.Description, Dir: s.Dir(), Body: s.Body, AllowedTools: s.AllowedTools})
	}
	return skilltool.New(ss)
}

// userHomes returns the user's home and troupe's home, "" for one that
// cannot be found.
func (a *app) userHomes() (user, troupe string) {
	if h, err := a.HomeDir(); err == nil {
		user = h
	}
	if th, err := a.home(); err == nil {
		troupe = th
	}
	return user, troupe
}

// expandCommand turns a prompt that calls a custom slash command ("/name
// args", from .claude/commands or .troupe/commands in the project or the
// user's home) into the command's prompt; its model is used when --model
// is not given. A prompt not shaped like a command is returned as is; an
// unknown command is an error listing the known ones.
func (a *app) expandCommand(h *headless, cwd, prompt string) (string, error) {
	name, args, ok := brief.SplitCommand(prompt)
	if !ok {
		return prompt, nil
	}
	userHome, troupeHome := a.userHomes()
	cmds, err := brief.LoadCommands(brief.CommandDirs(cwd, userHome, troupeHome))
	if err != nil {
		a.warnOnce(err.Error())
	}
	c, found := cmds[name]
	if !found {
		names := slices.Sorted(maps.Keys(cmds))
		if len(names) == 0 {
			return "", usagef("/%s: no such command (custom commands are .md files in .claude/commands or .troupe/commands, here or in your home; there are none)", name)
		}
		return "", usagef("/%s: no such command; the commands here are /%s", name, strings.Join(names, ", /"))
	}
	if c.Model != "" && h.model == "" {
		h.model = c.Model
	}
	return c.Expand(args), nil
}

// environment is agent.Config.Environment: the environment block, read
// again at each run; the git state is read at most every gitFresh (a
// teammate's many short runs do not each run git status on a large tree).
func (ac *agentContext) environment(ctx context.Context) string {
	return brief.Environment{Cwd: ac.cwd, Model: ac.model, Now: ac.now(), Git: ac.git, Getenv: ac.getenv}.Render(ctx)
}

// gitFresh is how long a read git state is reused.
const gitFresh = 30 * time.Second

func (ac *agentContext) git(ctx context.Context, dir string) (brief.Git, error) {
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

// nested returns an agent event hook that hands the agent the
// instructions of a subfolder the first time it reads or edits a file
// there, through send (delivered at its next tool-round boundary).
func (ac *agentContext) nested(send func(string)) func(agent.Event) {
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

// gitState reads the git state of dir for the environment block, without
// running anything a repository's configuration could add: no fsmonitor
// hook, no optional locks, a short deadline.
func gitState(ctx context.Context, dir string) (brief.Git, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "--no-optional-locks",
		"-C", dir, "status", "--short", "--branch", "--untracked-files=normal")
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		if strings.Contains(errOut.String(), "not a git repository") {
			return brief.Git{}, nil
		}
		if _, lookErr := exec.LookPath("git"); lookErr != nil {
			return brief.Git{}, nil // no git: say nothing about it
		}
		return brief.Git{}, err
	}
	g := brief.Git{Repo: true}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "## ") {
		head := strings.TrimPrefix(lines[0], "## ")
		head = strings.TrimPrefix(head, "No commits yet on ")
		head, _, _ = strings.Cut(head, "...")
		head, _, _ = strings.Cut(head, " ")
		if !strings.HasPrefix(head, "HEAD") {
			g.Branch = head
		}
		lines = lines[1:]
	}
	for _, l := range lines {
		if l != "" {
			g.Status = append(g.Status, l)
		}
	}
	return g, nil
}

// contextCommand is `troupe context`: what an agent working in a folder
// would be told besides its task.
func (a *app) contextCommand() *cobra.Command {
	var cwd string
	var noInstr bool
	cmd := &cobra.Command{
		Use:   "context",
		Short: "Show what an agent in a folder is told: project instructions (CLAUDE.md, AGENTS.md) and the environment",
		Long: `troupe context lists the instruction files an agent working in --cwd (default
the current folder) would be given, in the order it sees them, with their
sizes and anything cut or refused, and prints the environment block. With
--json, one document with the files and the environment.`,
		Args: positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := a.workDir(cwd)
			if err != nil {
				return err
			}
			ac := a.newAgentContext(dir, "", noInstr, nil)
			env := ac.environment(cmd.Context())
			var files []brief.Source
			if ac.instr != nil {
				files = ac.instr.Sources
			}
			if a.jsonOut {
				type file struct {
					Path       string `json:"path"`
					Scope      string `json:"scope"`
					ImportedBy string `json:"importedBy,omitempty"`
					Size       int    `json:"size"`
					Shown      int    `json:"shown"`
					Cut        bool   `json:"cut,omitempty"`
					Note       string `json:"note,omitempty"`
				}
				out := struct {
					Cwd         string `json:"cwd"`
					Files       []file `json:"files"`
					Environment string `json:"environment"`
				}{Cwd: dir, Files: []file{}, Environment: env}
				for _, s := range files {
					out.Files = append(out.Files, file{s.Path, s.Scope, s.ImportedBy, s.Size, len(s.Content), s.Cut, s.Note})
				}
				return a.printJSON(out)
			}
			w := a.Stdout
			fmt.Fprintf(w, "An agent in %s is told:\n\n", dir)
			switch {
			case noInstr:
				fmt.Fprintln(w, "project instructions: off (--no-project-instructions)")
			case len(files) == 0:
				fmt.Fprintln(w, "project instructions: none found (CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, AGENTS.md here and above; ~/.claude/CLAUDE.md; AGENTS.md in the troupe home)")
			default:
				fmt.Fprintln(w, "project instructions, in the order the agent sees them:")
				total := 0
				for _, s := range files {
					switch {
					case s.Note != "":
						fmt.Fprintf(w, "  %-8s %s: %s\n", s.Scope, termtext.Line(s.Path), s.Note)
					case s.Cut:
						fmt.Fprintf(w, "  %-8s %s  %s, cut to %s\n", s.Scope, termtext.Line(s.Path), byteSize(s.Size), byteSize(len(s.Content)))
					default:
						fmt.Fprintf(w, "  %-8s %s  %s\n", s.Scope, termtext.Line(s.Path), byteSize(s.Size))
					}
					total += len(s.Content)
				}
				fmt.Fprintf(w, "  in all %s (limits: %s a file, %s in all); a subfolder's files come when the agent first reads or edits a file there\n",
					byteSize(total), byteSize(brief.DefaultMaxFileBytes), byteSize(brief.DefaultMaxTotalBytes))
			}
			fmt.Fprintf(w, "\nenvironment (read again at each run):\n%s\n", env)
			return nil
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "the agent's working `DIR` (default: the current folder)")
	cmd.Flags().BoolVar(&noInstr, "no-project-instructions", false, "as the flag of troupe -p: leave the instruction files out")
	return cmd
}

// byteSize writes n bytes for a person.
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
