// Package coordinator holds coordinator mode: a lead that orchestrates
// background workers instead of using tools itself. It provides the
// coordinator's system prompt (embedded prompt.md, filled in by
// SystemPrompt), the tool names of the coordinator and of its workers, and
// the scratchpad folder workers share. The concrete tools are wired in
// cmd/troupe.
//
// Claims is the table behind one writer per file: a worker claims a file
// when it first writes or edits it, another worker's write of that file is
// refused with a message naming the holder, and the claims go when the
// worker ends. A session records whether it ran in coordinator mode, and
// resuming it re-enters or leaves the mode to match.
//
// troupe has no fork sub-agents (a sub-agent that inherits its parent's
// whole conversation and tools). If they are added, coordinator mode must
// disable them: a coordinator's workers start fresh from a self-contained
// prompt, and a fork of the coordinator would inherit its orchestration
// role instead of doing the work.
package coordinator

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// EnvMode is the environment variable that turns coordinator mode on
// (any truthy value: 1, true, yes, on); Claude Code's EnvClaudeMode is
// accepted the same way.
const (
	EnvMode       = "TROUPE_COORDINATOR_MODE"
	EnvClaudeMode = "CLAUDE_CODE_COORDINATOR_MODE"
)

// LeadTools are the only tools a coordinator gets: its workers', and a
// GitHub pull request's activity to follow (tool/prtool).
var LeadTools = []string{"Agent", "SendMessage", "TaskStop", "subscribe_pr_activity", "unsubscribe_pr_activity"}

// Internal are the tools a worker never gets: they belong to the
// coordinator or to teams.
var Internal = []string{"TeamCreate", "TeamDelete", "SendMessage", "SyntheticOutput", "Agent"}

// Marker is a phrase only the coordinator's system prompt holds.
const Marker = "running as a coordinator"

//go:embed prompt.md
var prompt string

// Context is what SystemPrompt fills in.
type Context struct {
	// WorkerTools are the names of the tools a worker has.
	WorkerTools []string
	// MCPServers are the names of the connected MCP servers.
	MCPServers []string
	// Scratchpad is the folder workers share; empty when there is none.
	Scratchpad string
	// Remote says workers may run on remote hosts (troupe worker
	// processes on the session's NATS store).
	Remote bool
}

// remoteWorkers is the prompt's part on remote workers, when there are.
const remoteWorkers = `a worker can run on another machine: an Agent call with isolation "remote", and labels to choose the hosts (such as ["gpu"]: the worker must carry every one). A remote worker works in that machine's own checkout and settings, not in this folder: it does not see your files, other workers' changes or the scratchpad, so its prompt must carry everything it needs, and its final report is all that comes back. Its result reaches you as a <task-notification> like any worker's; it cannot be continued with SendMessage (start a new one), and TaskStop stops it. Send work there only when it needs that machine (its hardware, its data, its network) or to run many jobs beyond this machine's means.`

// SystemPrompt returns the coordinator's system prompt for c.
func SystemPrompt(c Context) string {
	tools := "none"
	if len(c.WorkerTools) > 0 {
		tools = strings.Join(c.WorkerTools, ", ")
	}
	mcp := "none are connected in this session."
	if len(c.MCPServers) > 0 {
		mcp = strings.Join(c.MCPServers, ", ") + " (their tools are available to workers)."
	}
	scratch := "none in this session."
	if c.Scratchpad != "" {
		scratch = c.Scratchpad
	}
	remote := "none in this session: every worker runs on this machine."
	if c.Remote {
		remote = remoteWorkers
	}
	return strings.NewReplacer("{{WORKER_TOOLS}}", tools, "{{MCP_SERVERS}}", mcp, "{{SCRATCHPAD}}", scratch, "{{REMOTE}}", remote).Replace(prompt)
}

// WorkerSystem returns the system prompt of a worker of the given type.
// It holds "sub-agent" (as every sub-agent prompt does) and names the
// scratchpad when there is one.
func WorkerSystem(agentType, scratchpad string) string {
	s := "You are a " + agentType + " sub-agent working for a coordinator. Do the task you are given, then reply with a concise report of what you found or did: it is all the coordinator sees." +
		" Other workers may be running beside you: a file another worker is editing is held by it, and your Write or Edit of that file is refused naming the holder. Do not work around a refusal (with Bash or otherwise); finish the rest and say in your report which change you could not make."
	if scratchpad != "" {
		s += fmt.Sprintf("\nShared scratchpad folder (read and write there without asking): %s", scratchpad)
	}
	return s
}

// Enabled reports whether coordinator mode is on: flag set, or the
// EnvMode or EnvClaudeMode variable truthy in getenv.
func Enabled(flag bool, getenv func(string) string) bool {
	if flag {
		return true
	}
	if getenv == nil {
		return false
	}
	truthy := func(k string) bool {
		return slices.Contains([]string{"1", "true", "yes", "on"}, strings.ToLower(strings.TrimSpace(getenv(k))))
	}
	return truthy(EnvMode) || truthy(EnvClaudeMode)
}

// Scratchpad creates (mode 0700) and returns the scratchpad of a session
// whose task output folder is taskDir (<...>/<session>/tasks): the
// folder scratchpad beside it.
func Scratchpad(taskDir string) (string, error) {
	dir := filepath.Join(filepath.Dir(filepath.Clean(taskDir)), "scratchpad")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("scratchpad: %w", err)
	}
	return dir, nil
}
