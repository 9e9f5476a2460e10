package agentflags

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/internal/realpath"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/audit"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/permission/shell"
)

// CLIArgSource is the Source of the rules given by --allowedTools and
// --disallowedTools.
const CLIArgSource = "cliArg"

// DefaultPromptTimeout is how long --permission-prompt-command may take
// unless --permission-prompt-timeout says otherwise.
const DefaultPromptTimeout = 60 * time.Second

// Permissions is the permission flags: the mode, the rules and folders
// added to the settings files' own, the audit log and the command that
// answers questions.
type Permissions struct {
	Mode          string   // --permission-mode; "" is the settings' defaultMode
	Allowed       []string // --allowedTools, each comma or space separated
	Disallowed    []string // --disallowedTools
	AddDirs       []string // --add-dir
	Audit         string   // --audit: the decision log's file
	PromptCommand string   // --permission-prompt-command
	PromptTimeout time.Duration
}

// Add defines the permission flags on f, each help text after prefix
// (such as "with -p: "). Without questions, the flags of the prompt
// command are left out: nobody could be asked.
func (p *Permissions) Add(f *pflag.FlagSet, prefix string, questions bool) {
	f.StringVar(&p.Mode, "permission-mode", "", prefix+"permission `MODE`: default, acceptEdits, plan, bypassPermissions or dontAsk (default: the settings' defaultMode, else default)")
	f.StringArrayVar(&p.Allowed, "allowedTools", nil, prefix+"allow these permission `RULES` (comma or space separated, such as \"Bash(npm test) Edit\"; repeatable)")
	f.StringArrayVar(&p.Disallowed, "disallowedTools", nil, prefix+"deny these permission `RULES` (comma or space separated; repeatable)")
	f.StringArrayVar(&p.AddDirs, "add-dir", nil, prefix+"a further working `DIR` the agent may read (and edit in acceptEdits mode); repeatable")
	f.StringVar(&p.Audit, "audit", "", prefix+"append one JSON line per permission decision to `FILE`")
	p.PromptTimeout = DefaultPromptTimeout
	if !questions {
		return
	}
	f.StringVar(&p.PromptCommand, "permission-prompt-command", "", prefix+"a shell `COMMAND` that answers permission questions (request JSON on stdin, {\"behavior\":\"allow\"|\"deny\",\"message\":...} on stdout) and the agents' AskUserQuestion calls (\"kind\":\"question\", docs/ask.md)")
	f.DurationVar(&p.PromptTimeout, "permission-prompt-timeout", DefaultPromptTimeout, prefix+"how long --permission-prompt-command may take before the call is denied")
}

// Approver builds the permission layer of an agent in cwd from the
// settings files under a's home and the flags. Build it before the model
// is opened, so that a malformed settings file stops the run before any
// model call. The returned function closes the audit log.
func (p Permissions) Approver(a *cli.App, cwd string) (*approve.Approver, func(), error) {
	nop := func() {}
	home, err := a.Home()
	if err != nil {
		return nil, nop, err
	}
	userHome, err := a.HomeDir()
	if err != nil {
		userHome = "" // rules under ~/ then never allow
	}
	s, err := settings.Load(settings.Files(home, cwd), userHome)
	if err != nil {
		return nil, nop, fmt.Errorf("permission settings: %w", err)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.Stderr, "troupe: warning: %s\n", w)
	}
	mode := s.DefaultMode
	if p.Mode != "" {
		if mode, err = permission.ParseMode(p.Mode); err != nil {
			return nil, nop, cli.Usagef("--permission-mode: %v", err)
		}
	}
	if mode == "" {
		mode = permission.ModeDefault
	}
	pol := s.Policy()
	pol.Home, pol.Shell, pol.Realpath, pol.Stat = userHome, shell.Parse, realpath.Resolve, realpath.Stat
	pol.Protected = []string{home} // troupe's settings, teams, mailboxes and task lists: a run never rewrites them
	for _, l := range []struct {
		flag  string
		texts []string
		into  *[]permission.Rule
	}{{"--allowedTools", p.Allowed, &pol.Allow}, {"--disallowedTools", p.Disallowed, &pol.Deny}} {
		for _, text := range l.texts {
			for _, rs := range permission.SplitRules(text) {
				r, err := permission.ParseRule(rs)
				if err != nil {
					return nil, nop, cli.Usagef("%s: %v", l.flag, err)
				}
				r.Source, r.Base = CLIArgSource, cwd
				*l.into = append(*l.into, r)
			}
		}
	}
	// Loading a skill (the Skill tool) only reads its file; a deny or ask
	// rule for Skill still wins over this.
	pol.Allow = append(pol.Allow, permission.Rule{Tool: "Skill", Source: "built-in (loading a skill only reads it)"})
	// A question to the person is not a permission: the tool asks the
	// person itself, in every mode (docs/ask.md).
	pol.Allow = append(pol.Allow, permission.Rule{Tool: ask.ToolName, Source: "built-in (a question asks the person itself)"})
	dirs, err := addDirs(a, s.Dirs, p.AddDirs)
	if err != nil {
		return nil, nop, err
	}
	if p.PromptTimeout <= 0 {
		return nil, nop, cli.Usagef("--permission-prompt-timeout %s: want a positive duration", p.PromptTimeout)
	}
	ap := &approve.Approver{Policy: pol, Agent: "troupe", Cwd: cwd, Dirs: dirs, Mode: mode, Now: a.Now, Hint: approve.HeadlessHint(pol, cwd, dirs)}
	if strings.TrimSpace(p.PromptCommand) != "" {
		ap.Asker = &approve.Command{Shell: p.PromptCommand, Timeout: p.PromptTimeout}
	}
	if p.Audit != "" {
		log, err := audit.Open(p.Audit, a.Now)
		if err != nil {
			return nil, nop, fmt.Errorf("--audit: %w", err)
		}
		ap.Audit = log
		return ap, func() { log.Close() }, nil
	}
	return ap, nop, nil
}

// addDirs returns the settings' further working folders and those of
// --add-dir (relative to the current folder); one that is not a folder is
// a usage error.
func addDirs(a *cli.App, fromSettings, flags []string) ([]string, error) {
	dirs := append([]string(nil), fromSettings...)
	for _, d := range flags {
		abs := d
		if !filepath.IsAbs(d) {
			wd, err := a.Getwd()
			if err != nil {
				return nil, err
			}
			abs = filepath.Join(wd, d)
		}
		abs = filepath.Clean(abs)
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, cli.Usagef("--add-dir %s: not a folder", d)
		}
		dirs = append(dirs, abs)
	}
	return dirs, nil
}
