// Package permissionscmd is `troupe permissions`: the decision the
// permission rules give a tool call, and why.
package permissionscmd

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/internal/realpath"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/permission/shell"
)

// Exit codes of `troupe permissions check`: distinct from 1 (the command
// failed, such as a malformed settings file) and 2 (a malformed command
// line).
const (
	exitDeny = 4
	exitAsk  = 5
)

// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).permissionsCommand() }

func (a *app) permissionsCommand() *cobra.Command {
	return cli.Group("permissions", "Inspect permission rules and decisions", a.permissionsCheckCommand())
}

// CheckResult is the --json output of `troupe permissions check`.
type CheckResult struct {
	Decision permission.Behavior `json:"decision"`
	Rule     string              `json:"rule,omitempty"`
	Source   string              `json:"source,omitempty"`
	Reason   string              `json:"reason"`
	Mode     permission.Mode     `json:"mode"`
	Settings []string            `json:"settings"` // the files that were read
}

func (a *app) permissionsCheckCommand() *cobra.Command {
	var o checkOptions
	c := &cobra.Command{
		Use:   "check --tool TOOL [--input JSON]",
		Short: "Decide a tool call against the permission settings",
		Long: `check decides whether a tool call would be allowed, denied or asked
about, and prints the decision with the rule that made it and its file.

Settings are read from $TROUPE_HOME/settings.json (or --home), then
<cwd>/.claude/settings.json, <cwd>/.troupe/settings.json,
<cwd>/.claude/settings.local.json, <cwd>/.troupe/settings.local.json,
then each --settings FILE. The mode is --mode, else the last defaultMode,
else default.

Exit status: 0 allow, 1 deny (or an error), 2 ask (or a malformed
command line).`,
		Example: `  troupe permissions check --tool Bash --input '{"command":"git status && rm -rf ~"}'
  troupe permissions check --tool Read --input '{"file_path":"/etc/passwd"}' --mode plan --json`,
		Args: cli.Positional(),
		RunE: func(*cobra.Command, []string) error { return a.permissionsCheck(o) },
	}
	f := c.Flags()
	f.StringVar(&o.tool, "tool", "", "tool `NAME`: Bash, Read, Write, Edit, Glob, Grep, WebFetch, mcp__server__tool, ...")
	f.StringVar(&o.input, "input", "{}", "the tool input as a JSON object, such as '{\"command\":\"ls\"}'")
	f.StringVar(&o.mode, "mode", "", "permission `MODE`: default, acceptEdits, plan, bypassPermissions or dontAsk (default: the settings' defaultMode)")
	f.StringVar(&o.cwd, "cwd", "", "working `DIR` of the call (default: the current folder)")
	f.StringArrayVar(&o.files, "settings", nil, "read this settings `FILE` too, last (repeatable)")
	f.StringArrayVar(&o.dirs, "add-dir", nil, "a further working `DIR` (repeatable)")
	return c
}

// checkOptions are the flags of troupe permissions check.
type checkOptions struct {
	tool, input, mode, cwd string
	files, dirs            []string
}

// permissionsCheck is troupe permissions check: it decides one call.
func (a *app) permissionsCheck(o checkOptions) error {
	tool, input, mode, cwd, files, dirs := o.tool, o.input, o.mode, o.cwd, o.files, o.dirs
	if tool == "" {
		return cli.Usagef("--tool is required")
	}
	raw := json.RawMessage(input)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return cli.Usagef("--input: want a JSON object: %v", err)
	}
	m, err := permission.ParseMode(mode)
	if err != nil && mode != "" {
		return cli.Usagef("--mode: %v", err)
	}
	home, err := a.Home()
	if err != nil {
		return err
	}
	if cwd, err = a.WorkDir(cwd); err != nil {
		return err
	}
	userHome, err := a.HomeDir()
	if err != nil {
		userHome = "" // rules under ~/ then never allow
	}
	list := settings.Files(home, cwd)
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return err
		}
		list = append(list, settings.File{Path: abs, Scope: settings.ScopeCommandLine, Base: cwd})
	}
	s, err := settings.Load(list, userHome)
	if err != nil {
		return err
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.Stderr, "troupe: warning: %s\n", w)
	}
	if mode == "" {
		m = s.DefaultMode
		if m == "" {
			m = permission.ModeDefault
		}
	}
	extra := append([]string(nil), s.Dirs...)
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		extra = append(extra, abs)
	}
	p := s.Policy()
	p.Home, p.Shell, p.Realpath, p.Stat = userHome, shell.Parse, realpath.Resolve, realpath.Stat
	d := p.Check(permission.Request{Tool: tool, Input: raw, Cwd: cwd, Dirs: extra, Mode: m})
	res := CheckResult{Decision: d.Behavior, Reason: d.Reason, Mode: m, Settings: s.Loaded}
	if res.Settings == nil {
		res.Settings = []string{}
	}
	if d.Rule != nil {
		res.Rule, res.Source = d.Rule.String(), d.Rule.Source
	}
	if err := a.printCheck(res); err != nil {
		return err
	}
	switch d.Behavior {
	case permission.Deny:
		return &cli.ExitError{Code: exitDeny, Msg: "denied"}
	case permission.Ask:
		return &cli.ExitError{Code: exitAsk, Msg: "would ask"}
	}
	return nil
}

func (a *app) printCheck(r CheckResult) error {
	if a.JSON {
		return a.PrintJSON(r)
	}
	rule := "none"
	if r.Rule != "" {
		rule = r.Rule
		if r.Source != "" {
			rule += " (" + r.Source + ")"
		}
	}
	_, err := fmt.Fprintf(a.Stdout, "%s\nrule: %s\nreason: %s\nmode: %s\n", r.Decision, rule, r.Reason, r.Mode)
	return err
}
