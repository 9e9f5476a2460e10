package mate

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// EnvAgentTeams turns agent teams on for `troupe -p` (as --agent-teams
// does) and in a troupe pane teammate; Claude Code's variable is honoured
// too, and is what a Claude Code teammate gets.
const (
	EnvAgentTeams       = "TROUPE_AGENT_TEAMS"
	EnvClaudeAgentTeams = "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"
)

// TeamsEnabled reports whether agent teams are on: the flag, or either
// variable.
func TeamsEnabled(flag bool, getenv func(string) string) bool {
	return flag || Truthy(getenv(EnvAgentTeams)) || Truthy(getenv(EnvClaudeAgentTeams))
}

// Argv is the start of a pane teammate's command line, what troupe and
// Claude Code teammates alike are given (docs/claude-code.md, "The flags troupe
// accepts", in a real Claude Code lead's order): the program, the five identity flags of m
// in session, and the lead's public key when there is one. The caller
// appends the rest.
func Argv(bin string, m team.Member, session, leadKey string) []string {
	argv := []string{bin, "--agent-id", m.AgentID, "--agent-name", m.Name, "--team-name", TeamOf(m.AgentID),
		"--agent-color", m.Color, "--parent-session-id", session}
	if leadKey != "" {
		argv = append(argv, "--lead-verify-key", leadKey)
	}
	return argv
}

// TeamOf returns the team of an agent id (<name>@<team>), "" for an id
// that is not one.
func TeamOf(agentID string) string {
	_, t, _ := team.ParseAgentID(agentID)
	return t
}

// claudeEnv is what a Claude Code teammate's pane gets from the lead
// (docs/claude-code.md): the provider's endpoint and credentials, proxies
// and Claude Code's switches for telemetry (an unset one masks an
// ambient value).
var claudeEnv = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK",
	"CLAUDE_CODE_USE_VERTEX", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING"}

// EnvClaudeTodoTools turns on Claude Code's task list tools whatever the
// model (docs/claude-code.md, "From a troupe lead").
const EnvClaudeTodoTools = "CLAUDE_CODE_ENABLE_TODO_TOOLS"

// ClaudeArgv is the command line and environment of a Claude Code
// teammate run by command (a path, or a name looked up on PATH): the
// teammate flags of docs/claude-code.md, with the troupe home as
// CLAUDE_CONFIG_DIR so that both programs see the same team, and the
// team's task list as CLAUDE_CODE_TASK_LIST_ID. getenv reads the lead's
// environment. Its first prompt is already in its inbox (the lead writes
// it before the pane starts).
func ClaudeArgv(command, home string, m team.Member, r swarm.SpawnRequest, session, leadKey string, getenv func(string) string) ([]string, map[string]string, error) {
	bin := command
	if !strings.Contains(command, "/") {
		p, err := exec.LookPath(command)
		if err != nil {
			return nil, nil, fmt.Errorf("--teammate-command %s: %w", command, err)
		}
		bin = p
	}
	argv := Argv(bin, m, session, leadKey)
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
		"CLAUDE_CODE_TASK_LIST_ID": TeamOf(m.AgentID)}
	for _, k := range claudeEnv {
		env[k] = getenv(k)
	}
	// Claude Code 2.1.328 turns its Task* tools off for the current
	// default model unless told otherwise ("TaskUpdate is disabled for
	// this session"); a teammate needs them for the shared task list.
	env[EnvClaudeTodoTools] = "1"
	if v := getenv(EnvClaudeTodoTools); v != "" {
		env[EnvClaudeTodoTools] = v
	}
	return argv, env, nil
}
