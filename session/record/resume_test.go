package record

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
)

// Resume loads a session of its folder with its history, cut before an
// unfinished last turn; a missing one names the folder's latest sessions,
// another folder's is a *CwdError, and a first line naming another
// session is refused.
func TestResume(t *testing.T) {
	dir := t.TempDir()
	write := func(id, cwd string, msgs ...llm.Message) {
		t.Helper()
		var b strings.Builder
		hdr, _ := json.Marshal(Line{Type: "session", Version: 1, SessionID: id, Cwd: cwd, Provider: "scripted"})
		b.Write(append(hdr, '\n'))
		for _, m := range msgs {
			line, _ := json.Marshal(Line{Type: "message", Message: &m})
			b.Write(append(line, '\n'))
		}
		if err := os.WriteFile(Path(dir, id), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	whole := []llm.Message{llm.UserText("hi"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("hello")}}}
	write("whole", "/w", whole...)
	unfinished := append(whole, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "t1", Name: "Bash", Input: json.RawMessage(`{}`)}}})
	write("cut", "/w", append([]llm.Message{llm.UserText("go")}, unfinished[1:]...)...)
	write("elsewhere", "/other")

	r, err := Resume(dir, "whole", "/w")
	if err != nil || len(r.History) != 2 || r.Cut != nil || r.Path != Path(dir, "whole") {
		t.Errorf("Resume(whole) = %+v, %v; want its 2 messages, not cut", r, err)
	}
	r, err = Resume(dir, "cut", "/w")
	if err != nil || r.Cut == nil || len(r.History) >= len(r.File.Messages) {
		t.Errorf("Resume(cut) = %+v, %v; want the unfinished turn cut off, with why", r, err)
	}
	var cwdErr *CwdError
	if _, err := Resume(dir, "elsewhere", "/w"); !errors.As(err, &cwdErr) || cwdErr.Recorded != "/other" {
		t.Errorf("Resume of another folder's session = %v; want a *CwdError naming /other", err)
	}
	_, err = Resume(dir, "nope", "/w")
	if !errors.Is(err, ErrNoSession) || !strings.Contains(err.Error(), "Latest sessions of /w: ") || !strings.Contains(err.Error(), "whole") {
		t.Errorf("Resume of a missing session = %v; want ErrNoSession naming the latest of /w", err)
	}
	if _, err := Resume(dir, "../x", "/w"); err == nil || !strings.Contains(err.Error(), "not a session id") {
		t.Errorf("Resume of a bad id = %v", err)
	}
	write("liar", "/w")
	if err := os.Rename(Path(dir, "liar"), Path(dir, "renamed")); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(dir, "renamed", "/w"); err == nil || !strings.Contains(err.Error(), `session_id "liar" does not match`) {
		t.Errorf("Resume of a file whose first line names another session = %v", err)
	}
	if id, ok := Latest(dir, "/w"); !ok || id == "" {
		t.Errorf("Latest(/w) = %q, %v", id, ok)
	}
	if _, ok := Latest(dir, "/none"); ok {
		t.Error("Latest of a folder with no session reported one")
	}
}
