// Package mate is the command line of a pane teammate (docs/claude-code.md,
// "The flags troupe accepts"), both ends of it: the flags a teammate process reads
// (Flags, with Claude Code's pass-through flags accepted), the command
// lines a lead starts one with (Argv for a troupe teammate, ClaudeArgv
// for a Claude Code one), and the word a teammate that cannot start
// leaves for its lead (StartFailed).
package mate

import (
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/team"
)

// EnvPlanModeRequired is Claude Code's environment fallback for
// --plan-mode-required (docs/claude-code.md).
const EnvPlanModeRequired = "CLAUDE_CODE_PLAN_MODE_REQUIRED"

// Modes are the values of --teammate-mode.
var Modes = []string{"auto", "tmux", "iterm2", "in-process"}

// Flags are the flags a lead puts on a pane teammate's command
// line (docs/claude-code.md, "The flags troupe accepts"). A Claude Code lead started
// with CLAUDE_CODE_TEAMMATE_COMMAND=troupe passes exactly these, so troupe
// accepts all of them: the identity and lead flags are used, the ones for
// Claude Code features troupe lacks are accepted and ignored.
type Flags struct {
	// Identity (10.2). The three come together or not at all.
	AgentID   string // <name>@<team>
	AgentName string
	TeamName  string

	AgentColor       string
	ParentSessionID  string // the lead's session UUID
	PlanModeRequired bool   // also EnvPlanModeRequired
	leadVerifyKeyArg string // <epochMs>.<base64url SPKI>, see leadKey
	AgentType        string // a custom agent definition to run
	TeammateMode     string // lead side: auto, tmux, iterm2 or in-process

	// dangerouslySkip is Claude Code's spelling of permission mode
	// bypassPermissions (see permissionMode).
	dangerouslySkip bool
	// DisallowedTools are Claude Code's --disallowed-tools rules, for the
	// runtime to add to its deny rules.
	DisallowedTools []string

	// ignored are the Claude Code flags troupe has no use for, by name.
	ignored map[string]*string
	// ignoredBool are the boolean ones.
	ignoredBool map[string]*bool

	// Set by validate.
	LeadKey *mailbox.LeadVerifyKey // parsed --lead-verify-key; nil without one

	fs     *pflag.FlagSet
	getenv func(string) string
	log    *slog.Logger // slog.Default() unless the caller injects one
}

// ignoredStringFlags are value flags a Claude Code lead may pass through to
// its teammate (10.3) that troupe accepts and ignores.
var ignoredStringFlags = []struct{ name, usage string }{
	{"effort", "Claude Code's reasoning effort `LEVEL` (ignored)"},
	{"settings", "Claude Code settings `FILE or JSON` (ignored)"},
	{"plugin-dir", "Claude Code plugin `DIR` (ignored)"},
	{"mcp-config", "Claude Code MCP server `CONFIG` (ignored)"},
	{"tools", "Claude Code's built-in tool `LIST` (ignored)"},
}

// ignoredBoolFlags are the boolean ones.
var ignoredBoolFlags = []struct{ name, usage string }{
	{"strict-mcp-config", "use only --mcp-config servers (ignored)"},
	{"chrome", "Claude Code's Chrome integration on (ignored)"},
	{"no-chrome", "Claude Code's Chrome integration off (ignored)"},
}

// Add registers on root's own flags every teammate flag and
// pass-through flag of docs/claude-code.md, and returns where
// they land; getenv reads the environment's fallbacks (nil: os.Getenv).
// Call Validate after parsing. A pass-through flag that root
// already has (--model, --permission-mode) is left to its owner.
func Add(root *cobra.Command, getenv func(string) string) *Flags {
	if getenv == nil {
		getenv = os.Getenv
	}
	fs := root.Flags()
	f := &Flags{
		fs: fs, getenv: getenv, log: slog.Default(),
		ignored: map[string]*string{}, ignoredBool: map[string]*bool{},
	}
	fs.StringVar(&f.AgentID, "agent-id", "", "teammate: this agent's `ID`, <name>@<team> (with --agent-name and --team-name)")
	fs.StringVar(&f.AgentName, "agent-name", "", "teammate: this agent's `NAME` in its team")
	fs.StringVar(&f.TeamName, "team-name", "", "teammate: the `TEAM` to join")
	fs.StringVar(&f.AgentColor, "agent-color", "", "teammate: display `COLOR`: "+strings.Join(team.Palette[:], ", "))
	fs.StringVar(&f.ParentSessionID, "parent-session-id", "", "teammate: the lead's session `ID`")
	fs.BoolVar(&f.PlanModeRequired, "plan-mode-required", false, "teammate: start in plan mode and need the lead's approval to leave it (also "+EnvPlanModeRequired+"=1)")
	fs.StringVar(&f.leadVerifyKeyArg, "lead-verify-key", "", "teammate: the lead's public `KEY` (<epochMs>.<base64url Ed25519 SPKI>); lead protocol messages without a valid signature are then not acted on")
	fs.StringVar(&f.AgentType, "agent-type", "", "teammate: custom agent `TYPE` to run")
	fs.StringVar(&f.TeammateMode, "teammate-mode", "", "where teammates run: "+strings.Join(Modes, ", "))
	fs.BoolVar(&f.dangerouslySkip, "dangerously-skip-permissions", false, "same as --permission-mode bypassPermissions (Claude Code's spelling)")
	fs.StringArrayVar(&f.DisallowedTools, "disallowed-tools", nil, "deny these permission `RULES` (Claude Code's spelling of --disallowedTools; repeatable)")
	for _, fl := range ignoredStringFlags {
		if fs.Lookup(fl.name) != nil {
			continue
		}
		f.ignored[fl.name] = fs.String(fl.name, "", fl.usage)
		fs.MarkHidden(fl.name)
	}
	for _, fl := range ignoredBoolFlags {
		if fs.Lookup(fl.name) != nil {
			continue
		}
		f.ignoredBool[fl.name] = fs.Bool(fl.name, false, fl.usage)
		fs.MarkHidden(fl.name)
	}
	return f
}

// Enabled reports whether this process was started as a teammate: the
// identity flags are set. Call it after validate.
func (f *Flags) Enabled() bool { return f.AgentID != "" }

// teammateOnly are the flags that mean nothing without the identity flags.
var teammateOnly = []string{"agent-color", "parent-session-id", "plan-mode-required", "lead-verify-key", "agent-type"}

// Validate checks the parsed flags and returns a *UsageError naming the
// problem: the identity flags come together or not at all, the id is
// <name>@<team>, the names are valid, the color, teammate mode and lead
// key are well formed, and teammate-only flags need the identity. It also
// applies the plan-mode environment fallback, parses the lead key, and
// logs (debug) each ignored Claude Code flag that was given.
func (f *Flags) Validate() error {
	given := func(name string) bool { return f.fs.Changed(name) }
	var set, missing []string
	for _, n := range []string{"agent-id", "agent-name", "team-name"} {
		if given(n) {
			set = append(set, "--"+n)
		} else {
			missing = append(missing, "--"+n)
		}
	}
	if len(set) > 0 && len(missing) > 0 {
		return cli.Usagef("--agent-id, --agent-name and --team-name come together or not at all: %s given without %s", strings.Join(set, ", "), strings.Join(missing, " and "))
	}
	if len(set) == 0 {
		for _, n := range teammateOnly {
			if given(n) {
				return cli.Usagef("--%s is a teammate flag: it needs --agent-id, --agent-name and --team-name", n)
			}
		}
	} else {
		if err := f.validateIdentity(); err != nil {
			return err
		}
		if !f.PlanModeRequired && Truthy(f.getenv(EnvPlanModeRequired)) {
			f.PlanModeRequired = true
		}
	}
	if f.TeammateMode != "" && !slices.Contains(Modes, f.TeammateMode) {
		return cli.Usagef("--teammate-mode %q: want one of %s", f.TeammateMode, strings.Join(Modes, ", "))
	}
	for name, v := range f.ignored {
		if given(name) {
			f.log.Debug("teammate: ignoring a Claude Code flag troupe has no use for", "flag", "--"+name, "value", *v)
		}
	}
	for name := range f.ignoredBool {
		if given(name) {
			f.log.Debug("teammate: ignoring a Claude Code flag troupe has no use for", "flag", "--"+name)
		}
	}
	return nil
}

// validateIdentity checks the flags of a teammate invocation.
func (f *Flags) validateIdentity() error {
	if err := team.ValidateTeamName(f.TeamName); err != nil {
		return cli.Usagef("--team-name %q: %v", f.TeamName, err)
	}
	if err := team.ValidateAgentName(f.AgentName, false); err != nil {
		return cli.Usagef("--agent-name %q: %v", f.AgentName, err)
	}
	if want := team.AgentID(f.AgentName, f.TeamName); f.AgentID != want {
		return cli.Usagef("--agent-id %q does not match --agent-name %q and --team-name %q: want %q", f.AgentID, f.AgentName, f.TeamName, want)
	}
	if f.fs.Changed("agent-color") && !slices.Contains(team.Palette[:], f.AgentColor) {
		return cli.Usagef("--agent-color %q: want one of %s", f.AgentColor, strings.Join(team.Palette[:], ", "))
	}
	if f.fs.Changed("parent-session-id") && strings.TrimSpace(f.ParentSessionID) == "" {
		return cli.Usagef("--parent-session-id: empty")
	}
	if f.fs.Changed("agent-type") && strings.TrimSpace(f.AgentType) == "" {
		return cli.Usagef("--agent-type: empty")
	}
	if f.fs.Changed("lead-verify-key") {
		k, err := mailbox.ParseLeadVerifyKey(f.leadVerifyKeyArg)
		if err != nil {
			return cli.Usagef("--lead-verify-key: %v", err)
		}
		f.LeadKey = &k
	}
	return nil
}

// PermissionMode resolves the teammate's permission mode from the value of
// --permission-mode (explicit, possibly empty) and
// --dangerously-skip-permissions, which means bypassPermissions. Both at
// once with another mode is a usage error.
func (f *Flags) PermissionMode(explicit string) (permission.Mode, error) {
	if !f.dangerouslySkip {
		if explicit == "" {
			return "", nil
		}
		if explicit == string(permission.ModeAuto) { // a Claude Code lead's own mode: troupe has none like it
			f.log.Warn("--permission-mode auto is Claude Code's auto mode, which troupe does not have; running in acceptEdits")
			return permission.ModeAcceptEdits, nil
		}
		m, err := permission.ParseMode(explicit)
		if err != nil {
			return "", cli.Usagef("--permission-mode: %v", err)
		}
		return m, nil
	}
	if explicit != "" && explicit != string(permission.ModeBypass) {
		return "", cli.Usagef("--dangerously-skip-permissions means --permission-mode %s; it cannot be combined with --permission-mode %s", permission.ModeBypass, explicit)
	}
	return permission.ModeBypass, nil
}

// Truthy reports whether an environment value turns a switch on.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
