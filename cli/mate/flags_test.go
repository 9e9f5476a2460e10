package mate

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/permission"
)

// observedArgv is the command line a real Claude Code 2.1.328 lead gave
// its teammate program (docs/claude-code.md, captured by
// internal/claudecodetest's TestRealLeadLaunchesTeammateCommand).
var observedArgv = []string{
	"--agent-id", "helper@session-f1cb6ba9", "--agent-name", "helper", "--team-name", "session-f1cb6ba9",
	"--agent-color", "blue", "--parent-session-id", "f1cb6ba9-d9b3-42ed-b10d-6ef5b1fe71f8",
	"--lead-verify-key", "1796238052438.MCowBQYDK2VwAyEAdlSGVSeVc2ALYncHc6aa9mrQ3CLIoh-kWm1yd0dqGw8",
	"--permission-mode", "acceptEdits", "--model", "claude-opus-5-5",
}

// parseTeammate parses args on a throwaway root that, like troupe's, has
// --model and --permission-mode of its own, and validates.
func parseTeammate(t *testing.T, env map[string]string, args ...string) (*Flags, string, string, error) {
	t.Helper()
	root := &cobra.Command{Use: "troupe", SilenceUsage: true, SilenceErrors: true}
	var model, mode string
	root.Flags().StringVar(&model, "model", "", "")
	root.Flags().StringVar(&mode, "permission-mode", "", "")
	f := Add(root, nil)
	f.getenv = func(k string) string { return env[k] }
	root.RunE = func(*cobra.Command, []string) error { return nil }
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		return f, model, mode, err
	}
	return f, model, mode, f.Validate()
}

func TestTeammateFlagsObservedClaudeArgv(t *testing.T) {
	f, model, mode, err := parseTeammate(t, nil, observedArgv...)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Enabled() || f.AgentName != "helper" || f.TeamName != "session-f1cb6ba9" || f.AgentColor != "blue" ||
		f.ParentSessionID != "f1cb6ba9-d9b3-42ed-b10d-6ef5b1fe71f8" || f.PlanModeRequired {
		t.Errorf("parsed %+v", f)
	}
	if f.LeadKey == nil || f.LeadKey.String() != observedArgv[11] {
		t.Errorf("leadKey = %v; want the parsed --lead-verify-key", f.LeadKey)
	}
	if model != "claude-opus-5-5" || mode != "acceptEdits" {
		t.Errorf("--model %q, --permission-mode %q went elsewhere; want root's own flags to get them", model, mode)
	}
	if pm, err := f.PermissionMode(mode); err != nil || pm != permission.ModeAcceptEdits {
		t.Errorf("permissionMode = %q, %v; want acceptEdits", pm, err)
	}
}

func TestTeammateFlagsNotATeammate(t *testing.T) {
	f, _, _, err := parseTeammate(t, map[string]string{EnvPlanModeRequired: "1"}, "--teammate-mode", "tmux")
	if err != nil {
		t.Fatal(err)
	}
	if f.Enabled() || f.PlanModeRequired || f.TeammateMode != "tmux" {
		t.Errorf("enabled %v, planModeRequired %v, teammateMode %q; want a lead with tmux and no plan mode from the env", f.Enabled(), f.PlanModeRequired, f.TeammateMode)
	}
}

func TestTeammateFlagsPlanModeFromEnv(t *testing.T) {
	args := observedArgv[:6]
	for v, want := range map[string]bool{"1": true, "true": true, "ON": true, "0": false, "": false, "no": false} {
		f, _, _, err := parseTeammate(t, map[string]string{EnvPlanModeRequired: v}, args...)
		if err != nil {
			t.Fatal(err)
		}
		if f.PlanModeRequired != want {
			t.Errorf("%s=%q: planModeRequired %v; want %v", EnvPlanModeRequired, v, f.PlanModeRequired, want)
		}
	}
	f, _, _, err := parseTeammate(t, nil, append(slices.Clone(args), "--plan-mode-required")...)
	if err != nil || !f.PlanModeRequired {
		t.Errorf("--plan-mode-required: %v, %v; want plan mode required", f.PlanModeRequired, err)
	}
}

func TestTeammateFlagsUsageErrors(t *testing.T) {
	id := []string{"--agent-id", "helper@blue-team", "--agent-name", "helper", "--team-name", "blue-team"}
	with := func(extra ...string) []string { return append(slices.Clone(id), extra...) }
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"id alone", []string{"--agent-id", "helper@t"}, "--agent-id given without --agent-name and --team-name"},
		{"name and team without id", []string{"--agent-name", "helper", "--team-name", "t"}, "--agent-name, --team-name given without --agent-id"},
		{"id of another name", []string{"--agent-id", "other@blue-team", "--agent-name", "helper", "--team-name", "blue-team"}, `want "helper@blue-team"`},
		{"id of another team", []string{"--agent-id", "helper@red-team", "--agent-name", "helper", "--team-name", "blue-team"}, "does not match"},
		{"reserved name", []string{"--agent-id", "team-lead@t", "--agent-name", "team-lead", "--team-name", "t"}, "--agent-name \"team-lead\""},
		{"bad team name", []string{"--agent-id", "helper@../x", "--agent-name", "helper", "--team-name", "../x"}, "--team-name"},
		{"unknown color", with("--agent-color", "mauve"), "--agent-color \"mauve\": want one of red, blue"},
		{"empty parent session", with("--parent-session-id", " "), "--parent-session-id: empty"},
		{"empty agent type", with("--agent-type", ""), "--agent-type: empty"},
		{"bad lead key", with("--lead-verify-key", "123.abc"), "--lead-verify-key: lead verify key"},
		{"lead key without identity", []string{"--lead-verify-key", observedArgv[11]}, "--lead-verify-key is a teammate flag"},
		{"plan mode without identity", []string{"--plan-mode-required"}, "--plan-mode-required is a teammate flag"},
		{"bad teammate mode", []string{"--teammate-mode", "screen"}, "--teammate-mode \"screen\": want one of auto, tmux, iterm2, in-process"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := parseTeammate(t, nil, tt.args...)
			var ue *cli.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v; want a *cli.UsageError saying %q", err, tt.want)
			}
		})
	}
}

func TestTeammateFlagsPermissionMode(t *testing.T) {
	id := []string{"--agent-id", "helper@t", "--agent-name", "helper", "--team-name", "t"}
	f, _, mode, err := parseTeammate(t, nil, append(slices.Clone(id), "--dangerously-skip-permissions")...)
	if err != nil {
		t.Fatal(err)
	}
	if pm, err := f.PermissionMode(mode); err != nil || pm != permission.ModeBypass {
		t.Errorf("--dangerously-skip-permissions: mode %q, %v; want bypassPermissions", pm, err)
	}
	if _, err := f.PermissionMode("plan"); err == nil || !strings.Contains(err.Error(), "cannot be combined with --permission-mode plan") {
		t.Errorf("skip + plan: %v; want a usage error", err)
	}
	if pm, err := f.PermissionMode("bypassPermissions"); err != nil || pm != permission.ModeBypass {
		t.Errorf("skip + bypassPermissions: %q, %v", pm, err)
	}
	f.dangerouslySkip = false
	if pm, err := f.PermissionMode(""); err != nil || pm != "" {
		t.Errorf("no mode: %q, %v; want empty (the caller's default)", pm, err)
	}
	if _, err := f.PermissionMode("yolo"); err == nil {
		t.Error("--permission-mode yolo accepted")
	}
	// A Claude Code lead in its "auto" mode passes it on: the nearest
	// mode that allows no more.
	if pm, err := f.PermissionMode("auto"); err != nil || pm != permission.ModeAcceptEdits {
		t.Errorf("--permission-mode auto: %q, %v; want acceptEdits", pm, err)
	}
}

func TestTeammateFlagsIgnoredPassThrough(t *testing.T) {
	var logs bytes.Buffer
	args := append(slices.Clone(observedArgv), "--effort", "high", "--settings", `{"a":1}`, "--plugin-dir", "/p",
		"--mcp-config", "/m.json", "--strict-mcp-config", "--tools", "Bash,Edit", "--chrome", "--no-chrome",
		"--agent-type", "reviewer", "--disallowed-tools", "Bash(rm *)", "--disallowed-tools", "WebFetch")
	root := &cobra.Command{Use: "troupe", RunE: func(*cobra.Command, []string) error { return nil }}
	root.Flags().String("model", "", "")
	root.Flags().String("permission-mode", "", "")
	f := Add(root, nil)
	f.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--effort", "--settings", "--plugin-dir", "--mcp-config", "--strict-mcp-config", "--tools", "--chrome", "--no-chrome"} {
		if !strings.Contains(logs.String(), "flag="+flag) {
			t.Errorf("no debug line for ignored %s in:\n%s", flag, logs.String())
		}
	}
	if f.AgentType != "reviewer" || !slices.Equal(f.DisallowedTools, []string{"Bash(rm *)", "WebFetch"}) {
		t.Errorf("agentType %q, disallowedTools %q", f.AgentType, f.DisallowedTools)
	}
	// Ignored flags stay out of troupe --help.
	for _, name := range []string{"effort", "chrome", "tools"} {
		if fl := root.Flags().Lookup(name); fl == nil || !fl.Hidden {
			t.Errorf("--%s is not registered hidden", name)
		}
	}
}

// TestTeammateFlagsLeaveExistingFlagsAlone checks a pass-through flag the
// root already has is not registered twice (cobra would panic).
func TestTeammateFlagsLeaveExistingFlagsAlone(t *testing.T) {
	root := &cobra.Command{Use: "troupe"}
	var effort string
	root.Flags().StringVar(&effort, "effort", "", "troupe's own effort")
	f := Add(root, nil)
	if _, ok := f.ignored["effort"]; ok {
		t.Error("--effort registered as ignored although root has it")
	}
	root.SetArgs([]string{"--effort", "low"})
	root.RunE = func(*cobra.Command, []string) error { return nil }
	if err := root.Execute(); err != nil || effort != "low" {
		t.Errorf("root's own --effort = %q, %v", effort, err)
	}
}
