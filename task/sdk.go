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
	// Workflow is a local_workflow task's progress (task_progress).
	Workflow *WorkflowProgress `json:"workflow,omitempty"`
}

// WorkflowProgress is a workflow's phases and agents in a task_progress
// event.
type WorkflowProgress struct {
	RunID  string          `json:"run_id"`
	Phase  string          `json:"phase,omitempty"`
	Phases []WorkflowPhase `json:"phases"`
	Agents []WorkflowAgent `json:"agents"`
}

// StreamJSON returns the stream-json event for e, and false for the kinds
// stream-json does not carry: a running workflow's update is a
// task_progress with its phases and agents. It is a pure function.
func (e Event) StreamJSON() (SystemEvent, bool) {
	s := e.State
	switch e.Kind {
	case EventStarted:
		return SystemEvent{Type: "system", Subtype: string(EventStarted), TaskID: s.ID, ToolUseID: s.ToolUseID,
			Description: s.Description, TaskType: s.Type}, true
	case EventUpdated:
		if w, ok := s.Detail.(*Workflow); ok && s.Status == Running {
			return SystemEvent{Type: "system", Subtype: "task_progress", TaskID: s.ID, TaskType: s.Type,
				Workflow: &WorkflowProgress{RunID: w.RunID, Phase: w.Phase, Phases: w.Phases, Agents: w.Agents}}, true
		}
	case EventTerminated:
		return SystemEvent{Type: "system", Subtype: string(EventTerminated), TaskID: s.ID, Status: s.Status,
			Summary: e.Summary}, true
	case EventMonitor:
		return SystemEvent{Type: "system", Subtype: string(EventMonitor), TaskID: s.ID, ToolUseID: s.ToolUseID,
			TaskType: s.Type, Status: s.Status, Summary: e.Summary}, true
	}
	return SystemEvent{}, false
}
