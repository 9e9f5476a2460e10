package dashboard_test

import (
	"bytes"
	"html/template"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/mailbox"
)

func TestDescribe(t *testing.T) {
	enc := func(f mailbox.Frame) string {
		s, err := mailbox.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct{ from, to, text, want string }{
		{"alice", "team-lead", "plain words", "plain words"},
		{"alice", "team-lead", enc(mailbox.PermissionRequest{RequestID: "p", ToolName: "Bash", Input: []byte(`{"command":"go test"}`)}), "alice asks to run go test"},
		{"bob", "team-lead", enc(mailbox.ShutdownApproved{RequestID: "s", From: "bob"}), "bob approved shutdown"},
		{"bob", "team-lead", enc(mailbox.ShutdownRejected{RequestID: "s", From: "bob", Reason: "still busy"}), "bob rejected shutdown: still busy"},
		{"team-lead", "bob", enc(mailbox.ShutdownRequest{RequestID: "s", From: "team-lead"}), "team-lead asks bob to shut down"},
		{"alice", "team-lead", enc(mailbox.IdleNotification{From: "alice", CompletedTaskID: "3", CompletedStatus: "resolved"}), "alice is idle after task #3 (resolved)"},
		{"team-lead", "alice", enc(mailbox.PermissionResponse{RequestID: "p", Subtype: "error", Error: "no"}), "team-lead denied alice's tool call: no"},
		{"alice", "team-lead", `{"type":"permission_request","request_id":5}`, "alice sent a malformed protocol message"},
		{"alice", "team-lead", enc(mailbox.PermissionRequest{RequestID: "q", ToolName: "AskUserQuestion", Input: []byte(`{"questions":[{"question":"Which DB?","header":"DB","multiSelect":false,"options":[{"label":"a","description":"x"},{"label":"b","description":"y"}]}]}`)}),
			"alice asks the person: Which DB?"},
		{"team-lead", "alice", enc(mailbox.PermissionResponse{RequestID: "q", Subtype: "success", ApprovedRequest: &mailbox.ApprovedRequest{ToolName: "AskUserQuestion"},
			Response: &mailbox.PermissionVerdict{UpdatedInput: []byte(`{"questions":[],"answers":{"Which DB?":"b"}}`)}}), "team-lead answered alice's questions: Which DB? → b"},
	}
	for _, tt := range tests {
		if _, got := dashboard.Describe(tt.from, tt.to, tt.text); !strings.HasPrefix(got, tt.want) {
			t.Errorf("Describe(%s) = %q; want %q", tt.text, got, tt.want)
		}
	}
}

// FuzzDescribe: any message text yields valid words that, rendered as
// the page renders them, make no markup.
func FuzzDescribe(f *testing.F) {
	for _, s := range []string{"hi", `{"type":"permission_request","request_id":"p","tool_name":"Bash","input":{"command":"<script>"}}`,
		`{"type":"idle_notification","from":"a","summary":"<img src=x>"}`, `{"type":"shutdown_request"`, "\x1b[2J<b>", `{"type":"task_assignment","taskId":1}`} {
		f.Add(s)
	}
	tmpl := template.Must(template.New("").Parse(`<div>{{.}}</div>`))
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return // Prepare refuses such text before it is stored
		}
		_, words := dashboard.Describe("alice", "bob", text)
		var b bytes.Buffer
		if err := tmpl.Execute(&b, words); err != nil {
			t.Fatal(err)
		}
		if strings.Count(b.String(), "<") != 2 {
			t.Fatalf("rendered %q makes markup: %s", words, b.String())
		}
	})
}
