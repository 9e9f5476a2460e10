package mailbox

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Line shows plain text as it is and a frame as its kind and key fields,
// quoted where a value would be ambiguous.
func TestLine(t *testing.T) {
	enc := func(f Frame) string {
		s, err := Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct{ text, want string }{
		{"hello there", "hello there"},
		{`{"type":"shutdown_request"`, `{"type":"shutdown_request"`}, // malformed: what is stored
		{enc(ShutdownRequest{From: "team-lead", Reason: "work is done", RequestID: "shutdown-1@alice"}), `[shutdown_request] from=team-lead reason="work is done" request=shutdown-1@alice`},
		{enc(PlanApprovalRequest{From: "bob", RequestID: "p1", PlanContent: "step one\nstep two"}), `[plan_approval_request] from=bob request=p1 plan="step one..."`},
		{enc(PermissionResponse{RequestID: "r", Subtype: "success"}), `[permission_response] request=r result=success`},
		{enc(IdleNotification{From: "ann", IdleReason: IdleAvailable}), `[idle_notification] from=ann reason=available`},
		{enc(ShutdownApproved{}), `[shutdown_approved]`},
	} {
		if got := Line(c.text); got != c.want {
			t.Errorf("Line(%.40q) = %q; want %q", c.text, got, c.want)
		}
	}
	if got := firstLine(strings.Repeat("é", 100), 60); utf8.RuneCountInString(got) != 63 {
		t.Errorf("firstLine cuts %d runes; want 60 and an ellipsis", utf8.RuneCountInString(got))
	}
}
