package main

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// teammateCommand is the program pane teammates run instead of troupe:
// --teammate-command, else $TROUPE_TEAMMATE_COMMAND.
func teammateCommand(a *app, h *headless) string {
	if h.teams.command != "" {
		return h.teams.command
	}
	return a.Getenv(EnvTeammateCommand)
}

// claudeEnv is what a Claude Code teammate's pane gets from the lead
// (PROTOCOL.md 10.3): the variables that turn teams on, the shared
// folder, and the provider's endpoint and credentials (an unset one
// masks an ambient value).
var claudeEnv = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK",
	"CLAUDE_CODE_USE_VERTEX", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING"}

// envClaudeTodoTools turns on Claude Code's task list tools whatever the
// model (PROTOCOL.md 8, enablement caveat).
const envClaudeTodoTools = "CLAUDE_CODE_ENABLE_TODO_TOOLS"

// claudeArgv is the command line of a Claude Code teammate: the teammate
// flags of PROTOCOL.md 10.2 and 10.3, with the troupe home as
// CLAUDE_CONFIG_DIR so that both programs see the same team, and the
// team's task list as CLAUDE_CODE_TASK_LIST_ID. Its first prompt is
// already in its inbox (the lead writes it before the pane starts).
func claudeArgv(a *app, command, home string, m team.Member, r swarm.SpawnRequest, session string) ([]string, map[string]string, error) {
	bin := command
	if !strings.Contains(command, "/") {
		p, err := exec.LookPath(command)
		if err != nil {
			return nil, nil, fmt.Errorf("--teammate-command %s: %w", command, err)
		}
		bin = p
	}
	teamName := teamOf(m.AgentID)
	argv := []string{bin, "--agent-id", m.AgentID, "--agent-name", m.Name, "--team-name", teamName,
		"--agent-color", m.Color, "--parent-session-id", session}
	if r.PlanModeRequired {
		argv = append(argv, "--plan-mode-required")
	}
	switch m.Mode {
	case "":
	case string(permission.ModeBypass):
		argv = append(argv, "--dangerously-skip-permissions")
	default:
		argv = append(argv, "--permission-mode", m.Mode)
	}
	// Only a model the Agent call named: the lead's own model may be
	// another provider's, which claude would not know.
	if r.Model != "" {
		argv = append(argv, "--model", r.Model)
	}
	env := map[string]string{"CLAUDECODE": "1", EnvClaudeAgentTeams: "1", "CLAUDE_CONFIG_DIR": home,
		"CLAUDE_CODE_TASK_LIST_ID": teamName}
	for _, k := range claudeEnv {
		env[k] = a.Getenv(k)
	}
	// Claude Code 2.1.328 turns its Task* tools off for the current
	// default model unless told otherwise ("TaskUpdate is disabled for
	// this session"); a teammate needs them for the shared task list.
	env[envClaudeTodoTools] = "1"
	if v := a.Getenv(envClaudeTodoTools); v != "" {
		env[envClaudeTodoTools] = v
	}
	return argv, env, nil
}
