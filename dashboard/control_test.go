package dashboard_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/mailbox"
)

func postJSON(t *testing.T, url, body string) (int, string) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// lastFrame decodes the newest message of agent's inbox.
func lastFrame(t *testing.T, f *fixture, agent string) (mailbox.Message, mailbox.Frame) {
	t.Helper()
	inbox, err := f.other.Mail().Read(t.Context(), "alpha", agent, false)
	if err != nil || len(inbox) == 0 {
		t.Fatalf("inbox of %s: %d messages, %v", agent, len(inbox), err)
	}
	m := inbox[len(inbox)-1]
	fr, err := mailbox.Decode(m.Text)
	if err != nil {
		t.Fatal(err)
	}
	return m, fr
}

// Stop asks an in-process teammate to shut down; a pane teammate (bob,
// tmux), which takes only what its lead signed, is left to the lead: the
// page holds no key, and an unsigned request would be ignored.
func TestStop(t *testing.T) {
	f := newFixture(t, dashboard.Config{Control: true})
	if code, body := postJSON(t, f.srv.URL+"/team/alpha/stop", `{"name":"alice"}`); code != http.StatusOK {
		t.Fatalf("stop alice: %d %s", code, body)
	}
	m, fr := lastFrame(t, f, "alice")
	req, ok := fr.(mailbox.ShutdownRequest)
	if !ok || m.From != "team-lead" || req.From != "team-lead" || req.RequestID == "" {
		t.Fatalf("alice got %T from %s: %+v; want a shutdown request from team-lead", fr, m.From, fr)
	}
	code, body := postJSON(t, f.srv.URL+"/team/alpha/stop", `{"name":"bob"}`)
	if code != http.StatusConflict || !strings.Contains(body, "lead's own terminal") {
		t.Errorf("stop bob (a pane teammate): %d %s; want 409 saying to stop it from the lead", code, body)
	}
	if inbox, err := f.other.Mail().Read(t.Context(), "alpha", "bob", false); err != nil || len(inbox) != 0 {
		t.Errorf("bob's inbox after a refused stop: %d messages, %v; want none", len(inbox), err)
	}
	if code, _ := postJSON(t, f.srv.URL+"/team/alpha/stop", `{"name":"nobody"}`); code != http.StatusNotFound {
		t.Errorf("stop nobody: %d; want 404", code)
	}
	for _, body := range []string{`{"name":"team-lead"}`, `{"name":"*"}`, `{"name":""}`, `{"name":"bob","extra":1}`} {
		if code, _ := postJSON(t, f.srv.URL+"/team/alpha/stop", body); code != http.StatusBadRequest {
			t.Errorf("stop %s: %d; want 400", body, code)
		}
	}
}

func TestPermissionAnswers(t *testing.T) {
	f := newFixture(t, dashboard.Config{Control: true})
	ask := func(id string) {
		text, _ := mailbox.Encode(mailbox.PermissionRequest{RequestID: id, AgentID: "alice", ToolName: "Bash", ToolUseID: "tu-" + id,
			Input: json.RawMessage(`{"command":"go test ./..."}`), PermissionSuggestions: []json.RawMessage{}})
		f.send(t, "alice", "team-lead", text)
	}
	url := f.srv.URL + "/team/alpha/permission"

	ask("p1")
	if code, body := postJSON(t, url, `{"request_id":"p1","decision":"deny","feedback":"use make test"}`); code != http.StatusOK {
		t.Fatalf("deny: %d %s", code, body)
	}
	_, fr := lastFrame(t, f, "alice")
	if r, ok := fr.(mailbox.PermissionResponse); !ok || r.Subtype != "error" || !strings.Contains(r.Error, "use make test") || r.RequestID != "p1" {
		t.Fatalf("deny sent %+v; want an error response with the feedback", fr)
	}
	if code, _ := postJSON(t, url, `{"request_id":"p1","decision":"allow"}`); code != http.StatusConflict {
		t.Errorf("second answer to p1: %d; want 409", code)
	}

	ask("p2")
	if code, body := postJSON(t, url, `{"request_id":"p2","decision":"always"}`); code != http.StatusOK {
		t.Fatalf("always: %d %s", code, body)
	}
	_, fr = lastFrame(t, f, "alice")
	r, ok := fr.(mailbox.PermissionResponse)
	if !ok || r.Subtype != "success" || r.Response == nil || len(r.Response.PermissionUpdates) != 1 ||
		!strings.Contains(string(r.Response.PermissionUpdates[0]), `go test ./...`) || r.ApprovedRequest == nil || r.ApprovedRequest.InputDigest == "" {
		t.Fatalf("always sent %+v; want success with the exact rule and the input digest", fr)
	}

	for body, want := range map[string]int{
		`{"request_id":"nope","decision":"allow"}`: http.StatusNotFound,
		`{"request_id":"p2","decision":"maybe"}`:   http.StatusBadRequest,
		`not json`:                                 http.StatusBadRequest,
	} {
		if code, _ := postJSON(t, url, body); code != want {
			t.Errorf("permission %s: %d; want %d", body, code, want)
		}
	}
}

// A pane teammate's permission request is left to its lead (only a
// signed verdict moves it), and the page shows it still pending until a
// signed answer comes: an unsigned one does not count.
func TestPermissionOfPaneTeammate(t *testing.T) {
	f := newFixture(t, dashboard.Config{Control: true})
	text, _ := mailbox.Encode(mailbox.PermissionRequest{RequestID: "pb", AgentID: "bob", ToolName: "Bash", ToolUseID: "tu-pb",
		Input: json.RawMessage(`{"command":"make"}`), PermissionSuggestions: []json.RawMessage{}})
	f.send(t, "bob", "team-lead", text)
	code, body := postJSON(t, f.srv.URL+"/team/alpha/permission", `{"request_id":"pb","decision":"allow"}`)
	if code != http.StatusConflict || !strings.Contains(body, "runs in a pane") {
		t.Fatalf("answer bob's request: %d %s; want 409 saying bob runs in a pane", code, body)
	}
	page := func() string {
		t.Helper()
		res, err := http.Get(f.srv.URL + "/team/alpha")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if p := page(); !strings.Contains(p, `data-request="pb"`) || !strings.Contains(p, "answer in the lead's terminal") || strings.Contains(p, `data-act="allow" data-request="pb"`) {
		t.Fatalf("the page shows bob's request without its note, or with buttons:\n%s", p)
	}
	verdict, _ := mailbox.Encode(mailbox.PermissionResponse{RequestID: "pb", Subtype: "success", Response: &mailbox.PermissionVerdict{}})
	f.send(t, "team-lead", "bob", verdict) // unsigned: a forgery to bob
	if p := page(); !strings.Contains(p, `data-request="pb"`) {
		t.Error("an unsigned verdict counted as the answer to a pane teammate's request")
	}
	signed := mailbox.Message{From: "team-lead", Text: verdict, Extra: map[string]json.RawMessage{mailbox.LeadSigKey: json.RawMessage(`"c2ln"`)}}
	if _, err := f.other.Mail().Send(t.Context(), "alpha", "bob", signed); err != nil {
		t.Fatal(err)
	}
	if p := page(); strings.Contains(p, `data-request="pb"`) {
		t.Error("the request is still pending after its lead's signed answer")
	}
}

// Two answers to one request at once (two tabs): one is sent, the other
// refused.
func TestPermissionAnsweredOnce(t *testing.T) {
	f := newFixture(t, dashboard.Config{Control: true})
	for round := range 20 {
		id := fmt.Sprintf("race-%d", round)
		text, _ := mailbox.Encode(mailbox.PermissionRequest{RequestID: id, AgentID: "alice", ToolName: "Bash", ToolUseID: "tu-" + id,
			Input: json.RawMessage(`{"command":"go test"}`), PermissionSuggestions: []json.RawMessage{}})
		f.send(t, "alice", "team-lead", text)
		codes := make(chan int, 2)
		for _, d := range []string{"allow", "deny"} {
			go func() {
				code, _ := postJSON(t, f.srv.URL+"/team/alpha/permission", `{"request_id":"`+id+`","decision":"`+d+`"}`)
				codes <- code
			}()
		}
		ok := 0
		for range 2 {
			if <-codes == http.StatusOK {
				ok++
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d of two answers to one request were sent; want 1", round, ok)
		}
	}
}
