package mailbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/troupe-dev/troupe/mailbox"
)

const ts = "2026-12-02T13:13:36.880Z"

// sampleFrames has one frame of every kind, with every field set.
var sampleFrames = []mailbox.Frame{
	mailbox.IdleNotification{From: "helper", Timestamp: ts, IdleReason: mailbox.IdleFailed, Summary: "s", CompletedTaskID: "3",
		CompletedStatus: mailbox.CompletedFailed, FailureReason: "boom", Result: "partial"},
	mailbox.ShutdownRequest{RequestID: "shutdown-1796217216231@helper", From: "team-lead", Reason: "done", Timestamp: ts},
	mailbox.ShutdownResponse{RequestID: "shutdown-1796217216231@helper", Approve: true, Reason: "ok"},
	mailbox.ShutdownApproved{RequestID: "shutdown-1796217216231@helper", From: "helper", Timestamp: ts, PaneID: "%12", BackendType: "tmux"},
	mailbox.ShutdownRejected{RequestID: "shutdown-1796217216231@helper", From: "helper", Reason: "still working on #3", Timestamp: ts},
	mailbox.PlanApprovalRequest{From: "helper", Timestamp: ts, PlanFilePath: "/p.md", PlanContent: "# plan", RequestID: "plan_approval-1@helper@crew"},
	mailbox.PlanApprovalResponse{RequestID: "plan_approval-1@helper@crew", Approved: true, Feedback: "f", Timestamp: ts, PermissionMode: "default", PlanDigest: "abc"},
	mailbox.PermissionRequest{RequestID: "perm-1-abcdefg", AgentID: "helper", ToolName: "Bash", ToolUseID: "toolu_1", Description: "d",
		Input: json.RawMessage(`{"command":"rm -rf build"}`), PermissionSuggestions: []json.RawMessage{json.RawMessage(`{"type":"addRules"}`)}},
	mailbox.PermissionResponse{RequestID: "perm-1-abcdefg", Subtype: "success", ToolUseID: "toolu_1",
		ApprovedRequest: &mailbox.ApprovedRequest{ToolUseID: "toolu_1", ToolName: "Bash", InputDigest: "ff"},
		Response:        &mailbox.PermissionVerdict{UpdatedInput: json.RawMessage(`{"command":"ls"}`), PermissionUpdates: []json.RawMessage{}}},
	mailbox.TaskAssignment{TaskID: "3", Subject: "Write tests", Description: "d", AssignedBy: "team-lead", Timestamp: ts},
	mailbox.TaskCompleted{From: "helper", TaskID: "3", TaskSubject: "Write tests", Timestamp: ts},
}

func TestFrameRoundTrip(t *testing.T) {
	kinds := map[string]bool{}
	for _, f := range sampleFrames {
		kinds[f.Kind()] = true
		text, err := mailbox.Encode(f)
		if err != nil {
			t.Errorf("Encode(%T) error: %v", f, err)
			continue
		}
		if want := `{"type":"` + f.Kind() + `",`; !strings.HasPrefix(text, want) {
			t.Errorf("Encode(%T) = %s; want it to start with %s", f, text, want)
		}
		if !json.Valid([]byte(text)) {
			t.Errorf("Encode(%T) = %s; not valid JSON", f, text)
		}
		got, err := mailbox.Decode(text)
		if err != nil {
			t.Errorf("Decode(%s) error: %v", text, err)
			continue
		}
		if diff := cmp.Diff(f, got); diff != "" {
			t.Errorf("Decode(Encode(%T)) mismatch (-want +got):\n%s", f, diff)
		}
	}
	if len(kinds) != 11 {
		t.Errorf("sample frames cover %d kinds; want all 11", len(kinds))
	}
}

// TestFrameWireNames pins the on-disk key names of docs/protocol.md section 6:
// camelCase for most frames, snake_case for the permission relay.
func TestFrameWireNames(t *testing.T) {
	tests := []struct {
		f    mailbox.Frame
		keys []string
	}{
		{mailbox.ShutdownRequest{RequestID: "r", From: "team-lead", Timestamp: ts}, []string{"type", "requestId", "from", "timestamp"}},
		{mailbox.ShutdownResponse{RequestID: "r"}, []string{"type", "request_id", "approve"}},
		{mailbox.PlanApprovalResponse{RequestID: "r"}, []string{"type", "requestId", "approved", "timestamp"}},
		{mailbox.PermissionRequest{RequestID: "r"}, []string{"type", "request_id", "agent_id", "tool_name", "tool_use_id", "permission_suggestions"}},
		{mailbox.TaskAssignment{TaskID: "1"}, []string{"type", "taskId", "subject", "assignedBy", "timestamp"}},
		{mailbox.IdleNotification{From: "h", Timestamp: ts}, []string{"type", "from", "timestamp"}},
	}
	for _, tt := range tests {
		text, err := mailbox.Encode(tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			t.Fatalf("Encode(%T) = %s: %v", tt.f, text, err)
		}
		var got []string
		for k := range m {
			got = append(got, k)
		}
		if diff := cmp.Diff(tt.keys, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("Encode(%T) keys mismatch (-want +got):\n%s", tt.f, diff)
		}
	}
}

func TestDecodeObserved(t *testing.T) {
	tests := []struct {
		text string
		want mailbox.Frame
	}{
		{`{"type":"idle_notification","from":"helper","timestamp":"2026-12-02T13:13:36.880Z","idleReason":"available","result":"HELPER-DONE"}`,
			mailbox.IdleNotification{From: "helper", Timestamp: ts, IdleReason: "available", Result: "HELPER-DONE"}},
		{`{ "type": "shutdown_approved", "requestId": "shutdown-1796217216231@helper", "from": "helper", "timestamp": "2026-12-02T13:13:36.880Z", "paneId": "%12", "backendType": "tmux" }`,
			mailbox.ShutdownApproved{RequestID: "shutdown-1796217216231@helper", From: "helper", Timestamp: ts, PaneID: "%12", BackendType: "tmux"}},
		{`{ "type": "permission_response", "request_id": "perm-1", "subtype": "error", "tool_use_id": "toolu_1", "error": "Permission denied" }`,
			mailbox.PermissionResponse{RequestID: "perm-1", Subtype: "error", ToolUseID: "toolu_1", Error: "Permission denied"}},
		{"\n  " + `{"type":"task_completed","from":"helper","taskId":"3","timestamp":"2026-12-02T13:13:36.880Z","extra":"ignored"}` + "\n",
			mailbox.TaskCompleted{From: "helper", TaskID: "3", Timestamp: ts}},
	}
	for _, tt := range tests {
		got, err := mailbox.Decode(tt.text)
		if err != nil {
			t.Errorf("Decode(%s) error: %v", tt.text, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Decode(%s) mismatch (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestDecodePassesThroughText(t *testing.T) {
	tests := []string{
		"plain text",
		"",
		"{not json",
		"[1,2,3]",
		`"a JSON string"`,
		`{"no":"type"}`,
		`{"type":5}`,
		`{"type":null}`,
		`{"type":"some_future_frame","x":1}`,
		`{"type":"teammate_terminated","message":"x has shut down"}`,
		`{"type":"mode_set_request","mode":"bypassPermissions"}`,
		`{"type":"shutdown_request"} trailing`,
		"  leading spaces {\"type\":\"shutdown_request\"}",
	}
	for _, text := range tests {
		got, err := mailbox.Decode(text)
		if err != nil {
			t.Errorf("Decode(%q) error: %v; want Text", text, err)
			continue
		}
		if got != mailbox.Text(text) || got.Kind() != "" {
			t.Errorf("Decode(%q) = %#v; want mailbox.Text of the input unchanged", text, got)
		}
		if enc, _ := mailbox.Encode(got); enc != text {
			t.Errorf("Encode(Decode(%q)) = %q; want the text unchanged", text, enc)
		}
	}
}

func TestDecodeWrongFieldType(t *testing.T) {
	tests := []struct {
		text, kind, field string
	}{
		{`{"type":"shutdown_request","requestId":5}`, "shutdown_request", "requestId"},
		{`{"type":"shutdown_response","request_id":"r","approve":"yes"}`, "shutdown_response", "approve"},
		{`{"type":"plan_approval_response","approved":1}`, "plan_approval_response", "approved"},
		{`{"type":"idle_notification","from":["helper"]}`, "idle_notification", "from"},
		{`{"type":"task_assignment","taskId":3}`, "task_assignment", "taskId"},
		{`{"type":"permission_request","permission_suggestions":{}}`, "permission_request", "permission_suggestions"},
		{`{"type":"permission_response","approved_request":{"tool_name":false}}`, "permission_response", "tool_name"},
	}
	for _, tt := range tests {
		got, err := mailbox.Decode(tt.text)
		if err == nil {
			t.Errorf("Decode(%s) = %#v; want an error", tt.text, got)
			continue
		}
		if !strings.Contains(err.Error(), tt.kind) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("Decode(%s) error = %q; want it to name %s and %s", tt.text, err, tt.kind, tt.field)
		}
	}
}
