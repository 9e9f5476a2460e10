package hooks

import "encoding/json"

// Input is the JSON a hook reads on stdin: the fields every event carries
// and the event's own, empty ones left out (Claude Code's names).
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode,omitempty"`
	HookEventName  Event  `json:"hook_event_name"`

	// Tool events.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	Error        string          `json:"error,omitempty"` // PostToolUseFailure

	Prompt           string `json:"prompt,omitempty"`           // UserPromptSubmit
	StopHookActive   *bool  `json:"stop_hook_active,omitempty"` // Stop, SubagentStop
	Source           string `json:"source,omitempty"`           // SessionStart: startup, resume
	Reason           string `json:"reason,omitempty"`           // SessionEnd
	Trigger          string `json:"trigger,omitempty"`          // PreCompact: manual, auto
	Message          string `json:"message,omitempty"`          // Notification
	NotificationType string `json:"notification_type,omitempty"`

	// Team events.
	TeamName        string `json:"team_name,omitempty"`
	TeammateName    string `json:"teammate_name,omitempty"`
	TaskID          string `json:"task_id,omitempty"`
	TaskSubject     string `json:"task_subject,omitempty"`
	TaskDescription string `json:"task_description,omitempty"`
}

// matchValue is what an event's matchers are compared with.
func (in Input) matchValue() string {
	switch in.HookEventName {
	case PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest:
		return in.ToolName
	case SessionStart:
		return in.Source
	case SessionEnd:
		return in.Reason
	case PreCompact:
		return in.Trigger
	case Notification:
		return in.NotificationType
	}
	return ""
}
