package mailbox

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Frame is a structured protocol message, carried JSON-encoded in a
// Message's Text (docs/protocol.md section 6). Field names on the wire are
// exactly Claude Code's: camelCase for most frames, snake_case for the
// permission relay.
type Frame interface {
	// Kind returns the frame's "type" value.
	Kind() string
}

// Frame kinds.
const (
	KindIdleNotification     = "idle_notification"
	KindShutdownRequest      = "shutdown_request"
	KindShutdownResponse     = "shutdown_response"
	KindShutdownApproved     = "shutdown_approved"
	KindShutdownRejected     = "shutdown_rejected"
	KindPlanApprovalRequest  = "plan_approval_request"
	KindPlanApprovalResponse = "plan_approval_response"
	KindPermissionRequest    = "permission_request"
	KindPermissionResponse   = "permission_response"
	KindTaskAssignment       = "task_assignment"
	KindTaskCompleted        = "task_completed"
)

// Idle reasons and completed-task statuses of an IdleNotification.
const (
	IdleAvailable   = "available"
	IdleInterrupted = "interrupted"
	IdleFailed      = "failed"

	CompletedResolved = "resolved"
	CompletedBlocked  = "blocked"
	CompletedFailed   = "failed"
)

// IdleNotification tells the lead a teammate finished its turn.
type IdleNotification struct {
	From            string `json:"from"`
	Timestamp       string `json:"timestamp"`
	IdleReason      string `json:"idleReason,omitempty"`
	Summary         string `json:"summary,omitempty"`
	CompletedTaskID string `json:"completedTaskId,omitempty"`
	CompletedStatus string `json:"completedStatus,omitempty"`
	FailureReason   string `json:"failureReason,omitempty"`
	Result          string `json:"result,omitempty"`
}

// ShutdownRequest asks a teammate to shut down.
type ShutdownRequest struct {
	RequestID string `json:"requestId"`
	From      string `json:"from"`
	Reason    string `json:"reason,omitempty"`
	Timestamp string `json:"timestamp"`
	// BudgetSpent (troupe's own key; other readers ignore it) says the
	// lead asks because the session's budget is spent: no model call may
	// start to answer it, so a troupe teammate's runtime approves it
	// itself. It is part of the signed text, so only the lead can set it.
	BudgetSpent bool `json:"budgetSpent,omitempty"`
}

// ShutdownResponse is the teammate's answer as a tool gives it; on disk it
// becomes ShutdownApproved or ShutdownRejected.
type ShutdownResponse struct {
	RequestID string `json:"request_id"`
	Approve   bool   `json:"approve"`
	Reason    string `json:"reason,omitempty"`
}

// ShutdownApproved says a teammate agreed to shut down.
type ShutdownApproved struct {
	RequestID   string `json:"requestId"`
	From        string `json:"from"`
	Timestamp   string `json:"timestamp"`
	PaneID      string `json:"paneId,omitempty"`
	BackendType string `json:"backendType,omitempty"`
}

// ShutdownRejected says a teammate refused to shut down, and why.
type ShutdownRejected struct {
	RequestID string `json:"requestId"`
	From      string `json:"from"`
	Reason    string `json:"reason,omitempty"`
	Timestamp string `json:"timestamp"`
}

// PlanApprovalRequest carries a plan-mode teammate's plan to the lead.
type PlanApprovalRequest struct {
	From         string `json:"from"`
	Timestamp    string `json:"timestamp"`
	PlanFilePath string `json:"planFilePath,omitempty"`
	PlanContent  string `json:"planContent"`
	RequestID    string `json:"requestId"`
}

// PlanApprovalResponse is the lead's verdict on a plan.
type PlanApprovalResponse struct {
	RequestID      string `json:"requestId"`
	Approved       bool   `json:"approved"`
	Feedback       string `json:"feedback,omitempty"`
	Timestamp      string `json:"timestamp"`
	PermissionMode string `json:"permissionMode,omitempty"`
	PlanDigest     string `json:"planDigest,omitempty"`
}

// PermissionRequest relays a teammate's tool permission question to the lead.
type PermissionRequest struct {
	RequestID             string            `json:"request_id"`
	AgentID               string            `json:"agent_id"` // the worker's name
	ToolName              string            `json:"tool_name"`
	ToolUseID             string            `json:"tool_use_id"`
	Description           string            `json:"description,omitempty"`
	Input                 json.RawMessage   `json:"input,omitempty"`
	PermissionSuggestions []json.RawMessage `json:"permission_suggestions"`
}

// ApprovedRequest names the tool call a permission verdict is for.
type ApprovedRequest struct {
	ToolUseID   string `json:"tool_use_id"`
	ToolName    string `json:"tool_name"`
	InputDigest string `json:"input_digest,omitempty"`
}

// PermissionVerdict is the body of a successful PermissionResponse.
type PermissionVerdict struct {
	UpdatedInput      json.RawMessage   `json:"updated_input,omitempty"`
	PermissionUpdates []json.RawMessage `json:"permission_updates"`
}

// PermissionResponse is the lead's answer: Subtype "success" allows (with
// Response), "error" denies (with Error).
type PermissionResponse struct {
	RequestID       string             `json:"request_id"`
	Subtype         string             `json:"subtype"`
	ToolUseID       string             `json:"tool_use_id,omitempty"`
	ApprovedRequest *ApprovedRequest   `json:"approved_request,omitempty"`
	Response        *PermissionVerdict `json:"response,omitempty"`
	Error           string             `json:"error,omitempty"`
}

// TaskAssignment tells a teammate it now owns a task.
type TaskAssignment struct {
	TaskID      string `json:"taskId"`
	Subject     string `json:"subject"`
	Description string `json:"description,omitempty"`
	AssignedBy  string `json:"assignedBy"`
	Timestamp   string `json:"timestamp"`
}

// TaskCompleted tells the lead a task is done.
type TaskCompleted struct {
	From        string `json:"from"`
	TaskID      string `json:"taskId"`
	TaskSubject string `json:"taskSubject,omitempty"`
	Timestamp   string `json:"timestamp"`
}

// Text is a plain-text message, or a frame of a kind this package does not
// know, passed through unchanged.
type Text string

func (IdleNotification) Kind() string     { return KindIdleNotification }
func (ShutdownRequest) Kind() string      { return KindShutdownRequest }
func (ShutdownResponse) Kind() string     { return KindShutdownResponse }
func (ShutdownApproved) Kind() string     { return KindShutdownApproved }
func (ShutdownRejected) Kind() string     { return KindShutdownRejected }
func (PlanApprovalRequest) Kind() string  { return KindPlanApprovalRequest }
func (PlanApprovalResponse) Kind() string { return KindPlanApprovalResponse }
func (PermissionRequest) Kind() string    { return KindPermissionRequest }
func (PermissionResponse) Kind() string   { return KindPermissionResponse }
func (TaskAssignment) Kind() string       { return KindTaskAssignment }
func (TaskCompleted) Kind() string        { return KindTaskCompleted }

// Kind returns "" for plain text.
func (Text) Kind() string { return "" }

func newFrame(kind string) Frame {
	switch kind {
	case KindIdleNotification:
		return &IdleNotification{}
	case KindShutdownRequest:
		return &ShutdownRequest{}
	case KindShutdownResponse:
		return &ShutdownResponse{}
	case KindShutdownApproved:
		return &ShutdownApproved{}
	case KindShutdownRejected:
		return &ShutdownRejected{}
	case KindPlanApprovalRequest:
		return &PlanApprovalRequest{}
	case KindPlanApprovalResponse:
		return &PlanApprovalResponse{}
	case KindPermissionRequest:
		return &PermissionRequest{}
	case KindPermissionResponse:
		return &PermissionResponse{}
	case KindTaskAssignment:
		return &TaskAssignment{}
	case KindTaskCompleted:
		return &TaskCompleted{}
	}
	return nil
}

// Encode returns the text that carries f: its JSON with a "type" key first.
func Encode(f Frame) (string, error) {
	if t, ok := f.(Text); ok {
		return string(t), nil
	}
	body, err := json.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("encode %s frame: %w", f.Kind(), err)
	}
	var b strings.Builder
	b.WriteString(`{"type":`)
	kb, _ := json.Marshal(f.Kind())
	b.Write(kb)
	if len(body) > 2 {
		b.WriteByte(',')
		b.Write(body[1:])
	} else {
		b.WriteByte('}')
	}
	return b.String(), nil
}

// Decode parses a message text. A JSON object whose "type" names a known
// kind decodes to that frame type (a value, not a pointer); anything else,
// including a JSON object of an unknown kind, is returned as Text. A text
// that claims a known kind but does not fit it is an error naming the kind
// and the field.
func Decode(text string) (Frame, error) {
	s := strings.TrimSpace(text)
	if !strings.HasPrefix(s, "{") {
		return Text(text), nil
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &head); err != nil {
		return Text(text), nil
	}
	var kind string
	if err := json.Unmarshal(head["type"], &kind); err != nil { // exactly "type", as Claude Code reads it
		return Text(text), nil
	}
	f := newFrame(kind)
	if f == nil {
		return Text(text), nil
	}
	if err := json.Unmarshal([]byte(s), f); err != nil {
		var te *json.UnmarshalTypeError
		if asType(err, &te) {
			return nil, fmt.Errorf("decode %s frame: field %s: want %s, got JSON %s", kind, te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("decode %s frame: %w", kind, err)
	}
	return deref(f), nil
}

func deref(f Frame) Frame {
	switch v := f.(type) {
	case *IdleNotification:
		return *v
	case *ShutdownRequest:
		return *v
	case *ShutdownResponse:
		return *v
	case *ShutdownApproved:
		return *v
	case *ShutdownRejected:
		return *v
	case *PlanApprovalRequest:
		return *v
	case *PlanApprovalResponse:
		return *v
	case *PermissionRequest:
		return *v
	case *PermissionResponse:
		return *v
	case *TaskAssignment:
		return *v
	case *TaskCompleted:
		return *v
	}
	return f
}
