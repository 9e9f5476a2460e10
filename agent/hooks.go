package agent

import (
	"context"
	"encoding/json"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// Hook event names the loop raises (Claude Code's names).
const (
	HookPreToolUse         = "PreToolUse"
	HookPostToolUse        = "PostToolUse"
	HookPostToolUseFailure = "PostToolUseFailure"
	HookUserPromptSubmit   = "UserPromptSubmit"
	HookStop               = "Stop" // a sub-agent's Hooks report it as SubagentStop
	HookPreCompact         = "PreCompact"
)

// HookBlocked starts the error result of a call a PreToolUse hook
// blocked; the hook's reason follows.
const HookBlocked = "Blocked by a PreToolUse hook: "

// Stop reasons a hook causes.
const (
	// StopHookBlocked is Result.StopReason when a UserPromptSubmit hook
	// refused the prompt; Result.Text is its reason.
	StopHookBlocked llm.StopReason = "hook_blocked"
	// StopHookHalted is Result.StopReason when a hook answered
	// "continue": false; Result.Text is its stop reason.
	StopHookHalted llm.StopReason = "hook_stopped"
)

// Hooks are the user's hooks, consulted by the loop at its events. Hook
// must return when ctx ends; the loop waits for it.
type Hooks interface {
	Hook(ctx context.Context, e HookEvent) HookResult
}

// HookEvent is one event of the loop.
type HookEvent struct {
	Name      string // one of the Hook… names
	Tool      string
	ToolUseID string
	Input     json.RawMessage // the tool input (as it will run, for the Post events)
	// Result is the tool's result, for PostToolUse and PostToolUseFailure
	// (a value, so that a loop without hooks allocates nothing for it).
	Result tool.Result
	// Prompt is the submitted prompt (UserPromptSubmit).
	Prompt string
	// StopHookActive tells a Stop hook that the agent is already working
	// again because of a Stop hook in this run (a guard against loops).
	StopHookActive bool
	// Trigger is "auto" or "manual" (PreCompact).
	Trigger string
}

// HookResult is what the hooks of an event decided.
type HookResult struct {
	// Block refuses what the event is about: the tool call does not run
	// (PreToolUse), the prompt is dropped (UserPromptSubmit), the agent
	// goes back to work (Stop); after a tool call, Reason is added to its
	// result. Reason is what the model (or the person) sees.
	Block  bool
	Reason string
	// Permission is a PreToolUse hook's decision, handed to the Approver
	// in Request.Hook: "allow", "ask" or "" (a "deny" is a Block).
	Permission string
	// UpdatedInput replaces the tool input (PreToolUse).
	UpdatedInput json.RawMessage
	// Context is text added for the model: after the prompt, or to the
	// tool's result.
	Context string
	// Halt ends the run after this event ("continue": false); HaltReason
	// becomes Result.Text.
	Halt       bool
	HaltReason string
}

// hook raises e when the agent has hooks; it notes a Halt for the loop.
func (a *Agent) hook(ctx context.Context, e HookEvent) HookResult {
	if a.cfg.Hooks == nil {
		return HookResult{}
	}
	r := a.cfg.Hooks.Hook(ctx, e)
	if r.Halt {
		a.mu.Lock()
		if !a.halted {
			a.halted, a.haltWhy = true, r.HaltReason
		}
		a.mu.Unlock()
	}
	return r
}

// halt reports whether a hook ended the run, and its reason.
func (a *Agent) halt() (bool, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.halted, a.haltWhy
}
