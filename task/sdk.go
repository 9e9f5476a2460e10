package task

// SystemEvent is the stream-json form of a task event: a "system" message
// with subtype task_started, task_terminated or task_monitor (a monitor's
// batch of lines).
type SystemEvent struct {
	Type        string `json:"type"`    // "system"
	Subtype     string `json:"subtype"` // task_started, task_terminated
	TaskID      ID     `json:"task_id"`
	ToolUseID   string `json:"tool_use_id,omitempty"`
	Description string `json:"description,omitempty"`
	TaskType    Type   `json:"task_type,omitempty"`
	Status      Status `json:"status,omitempty"`
	Summary     string `json:"summary,omitempty"`
}

// StreamJSON returns the stream-json event for e, and false for the kinds
// stream-json does not carry. It is a pure function.
func (e Event) StreamJSON() (SystemEvent, bool) {
	s := e.State
	switch e.Kind {
	case EventStarted:
		return SystemEvent{Type: "system", Subtype: string(EventStarted), TaskID: s.ID, ToolUseID: s.ToolUseID,
			Description: s.Description, TaskType: s.Type}, true
	case EventTerminated:
		return SystemEvent{Type: "system", Subtype: string(EventTerminated), TaskID: s.ID, Status: s.Status,
			Summary: e.Summary}, true
	case EventMonitor:
		return SystemEvent{Type: "system", Subtype: string(EventMonitor), TaskID: s.ID, ToolUseID: s.ToolUseID,
			TaskType: s.Type, Status: s.Status, Summary: e.Summary}, true
	}
	return SystemEvent{}, false
}
