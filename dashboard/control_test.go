package dashboard_test

import (
	"encoding/json"
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

func TestStop(t *testing.T) {
	f := newFixture(t, dashboard.Config{Control: true})
	if code, body := postJSON(t, f.srv.URL+"/team/alpha/stop", `{"name":"bob"}`); code != http.StatusOK {
		t.Fatalf("stop bob: %d %s", code, body)
	}
	m, fr := lastFrame(t, f, "bob")
	req, ok := fr.(mailbox.ShutdownRequest)
	if !ok || m.From != "team-lead" || req.From != "team-lead" || req.RequestID == "" {
		t.Fatalf("bob got %T from %s: %+v; want a shutdown request from team-lead", fr, m.From, fr)
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
