package mailboxtest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// frames returns one sample of every frame kind the package knows, plus
// plain text and a frame of an unknown kind.
func frames() []mailbox.Frame {
	ts := "2026-12-02T13:13:36.880Z"
	return []mailbox.Frame{
		mailbox.IdleNotification{From: "helper", Timestamp: ts, IdleReason: mailbox.IdleAvailable, Summary: "done", CompletedTaskID: "3", CompletedStatus: mailbox.CompletedResolved, Result: "HELPER-DONE"},
		mailbox.ShutdownRequest{RequestID: "shutdown-1796217216231@helper", From: team.LeadName, Reason: "wrap up", Timestamp: ts},
		mailbox.ShutdownResponse{RequestID: "shutdown-1796217216231@helper", Approve: true, Reason: "ok"},
		mailbox.ShutdownApproved{RequestID: "shutdown-1796217216231@helper", From: "helper", Timestamp: ts, PaneID: "%12", BackendType: team.BackendTmux},
		mailbox.ShutdownRejected{RequestID: "shutdown-1796217216231@helper", From: "helper", Reason: "still working on #3", Timestamp: ts},
		mailbox.PlanApprovalRequest{From: "helper", Timestamp: ts, PlanFilePath: "/tmp/plan.md", PlanContent: "# Plan\n1. test", RequestID: "plan_approval-1796217216231@helper@crew"},
		mailbox.PlanApprovalResponse{RequestID: "plan_approval-1796217216231@helper@crew", Approved: true, Feedback: "go", Timestamp: ts, PermissionMode: "default", PlanDigest: "ab12"},
		mailbox.PermissionRequest{RequestID: "perm-1796217216231-k3j9x0a", AgentID: "helper", ToolName: "Bash", ToolUseID: "toolu_1", Description: "remove build", Input: json.RawMessage(`{"command":"rm -rf build"}`), PermissionSuggestions: []json.RawMessage{}},
		mailbox.PermissionResponse{RequestID: "perm-1796217216231-k3j9x0a", Subtype: "success", ToolUseID: "toolu_1",
			ApprovedRequest: &mailbox.ApprovedRequest{ToolUseID: "toolu_1", ToolName: "Bash", InputDigest: "deadbeef"},
			Response:        &mailbox.PermissionVerdict{UpdatedInput: json.RawMessage(`{"command":"rm -rf build"}`), PermissionUpdates: []json.RawMessage{json.RawMessage(`{"type":"setMode","mode":"default","destination":"session"}`)}}},
		mailbox.PermissionResponse{RequestID: "perm-1796217216231-k3j9x0b", Subtype: "error", ToolUseID: "toolu_2", Error: "Permission denied"},
		mailbox.TaskAssignment{TaskID: "3", Subject: "Write tests", Description: "all of them", AssignedBy: team.LeadName, Timestamp: ts},
		mailbox.TaskCompleted{From: "helper", TaskID: "3", TaskSubject: "Write tests", Timestamp: ts},
		mailbox.Text("plain text with {braces} and \"quotes\""),
		mailbox.Text(`{"type":"some_future_frame","x":1}`),
	}
}

func testFrames(t *testing.T, ts team.Store, ms mailbox.Store) {
	newTeam(t, ts, "helper")
	for _, f := range frames() {
		text, err := mailbox.Encode(f)
		if err != nil {
			t.Errorf("Encode(%T) error: %v", f, err)
			continue
		}
		d := send(t, ms, "helper", mailbox.Message{From: team.LeadName, Text: text})
		var got mailbox.Message
		for _, m := range read(t, ms, "helper", false) {
			if m.ID == d[0].ID {
				got = m
			}
		}
		if got.Text != text {
			t.Errorf("%s frame: stored text = %q; want %q", f.Kind(), got.Text, text)
			continue
		}
		back, err := mailbox.Decode(got.Text)
		if err != nil {
			t.Errorf("Decode(%q) error: %v", got.Text, err)
			continue
		}
		if diff := cmp.Diff(f, back); diff != "" {
			t.Errorf("%T round trip through the store mismatch (-want +got):\n%s", f, diff)
		}
	}
}

// testNoAliasing checks that callers cannot change stored messages through
// the values they passed in or got back.
func testNoAliasing(t *testing.T, ts team.Store, ms mailbox.Store) {
	newTeam(t, ts, "alice")
	extra := map[string]json.RawMessage{"lead_sig": json.RawMessage(`"sig"`)}
	send(t, ms, "alice", mailbox.Message{From: team.LeadName, Text: "t", Extra: extra})
	extra["lead_sig"][1] = 'X'
	extra["added"] = json.RawMessage(`1`)
	got := read(t, ms, "alice", false)
	got[0].Extra["lead_sig"][1] = 'Y'
	got[0].Text = "changed"
	again := read(t, ms, "alice", false)
	want := map[string]json.RawMessage{"lead_sig": json.RawMessage(`"sig"`)}
	if diff := cmp.Diff(want, map[string]json.RawMessage(again[0].Extra)); diff != "" || again[0].Text != "t" {
		t.Errorf("stored message changed through a caller's copy: text %q, extra diff (-want +got):\n%s", again[0].Text, diff)
	}
}
