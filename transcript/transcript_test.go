package transcript

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm"
)

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func TestAppendReadRender(t *testing.T) {
	home := t.TempDir()
	dir := Dir(home, "s-1")
	w, err := Appender(dir, Header{Agent: "lead", Kind: KindLead, Session: "s-1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		`{"type":"user","time":"2026-12-03T09:00:01Z","message":{"role":"user","content":[{"type":"text","text":"fix the bug"}]}}`,
		`{"type":"tool_use","time":"2026-12-03T09:00:02Z","tool_use":{"type":"tool_use","name":"Read","input":{"file_path":"a.go"}}}`,
		`{"type":"tool_result","time":"2026-12-03T09:00:02Z","tool_result":{"type":"tool_result","text":"package a\n\u001b[31m","is_error":false},"elapsed_ms":3}`,
		`{"type":"result","time":"2026-12-03T09:00:03Z","result":{"Text":"fixed"}}`,
	} {
		if _, err := w.Write([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "lead.jsonl")
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("transcript file %v, %v; want mode 0600", st.Mode(), err)
	}
	// A torn last line (a crash mid-write) is ignored.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"assis`)
	f.Close()
	tr, err := Read(path)
	if err != nil || tr.Header.Agent != "lead" || len(tr.Lines) != 4 {
		t.Fatalf("Read = %+v, %v", tr, err)
	}
	var out bytes.Buffer
	if err := Render(&out, tr, func(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== lead (lead), session s-1", "user: fix the bug", `→ Read {"file_path":"a.go"}`, `← package a \x1b[31m (3 ms)`, "run ended: fixed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("render lacks %q:\n%s", want, out.String())
		}
	}
	// Reopening a transcript (a resumed session) keeps one header.
	if _, err := Appender(dir, Header{Agent: "lead", Kind: KindLead, Session: "s-1"}, t0); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.Count(string(b), `"type":"transcript"`) != 1 {
		t.Error("a second header was written")
	}
}

func TestFind(t *testing.T) {
	home := t.TempDir()
	for _, s := range []struct{ session, agent string }{{"s-1", "lead"}, {"s-1", "helper"}, {"s-1", "a1b2c3"}, {"s-2", "lead"}, {"s-2", "helper"}} {
		if _, err := Appender(Dir(home, s.session), Header{Agent: s.agent, Session: s.session}, t0); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	os.Chtimes(filepath.Join(Dir(home, "s-1"), "helper.jsonl"), now, now.Add(time.Hour)) // s-1's helper is the newest
	paths, err := Find(home, "s-1")
	if err != nil || len(paths) != 3 || filepath.Base(paths[0]) != "lead.jsonl" {
		t.Errorf("Find(s-1) = %v, %v; want the lead first of 3", paths, err)
	}
	paths, err = Find(home, "helper")
	if err != nil || len(paths) != 1 || !strings.Contains(paths[0], "s-1") {
		t.Errorf("Find(helper) = %v, %v; want s-1's", paths, err)
	}
	if _, err := Find(home, "nobody"); err == nil || !strings.Contains(err.Error(), "neither a session id") {
		t.Errorf("Find(nobody) = %v", err)
	}
	if _, err := Find(t.TempDir(), "x"); err == nil {
		t.Error("Find in a home without sessions")
	}
	if got := FileName("../../etc/passwd"); got != "_.._etc_passwd.jsonl" {
		t.Errorf("FileName = %q", got)
	}
}

// FuzzParse: any bytes parse or fail with an error; never a panic, and
// the size read covers complete lines only.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"{\"type\":\"transcript\",\"agent\":\"lead\"}\n{\"type\":\"user\"}\n",
		"{\"type\":\"transcript\"}\n{\"type\":\"assis",
		"{\"type\":\"transcript\"}\n{\"type\":\"tool_result\",\"tool_result\":{\"type\":\"tool_result\",\"images\":[{\"media_type\":\"image/png\",\"omitted_bytes\":70}]}}\n",
		"not json\n", "", "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := Parse(bytes.NewReader(b))
		if err == nil && tr.Size > int64(len(b)) {
			t.Fatalf("size %d over %d bytes", tr.Size, len(b))
		}
		if err == nil && tr.Size > 0 && b[tr.Size-1] != '\n' {
			t.Fatalf("size %d does not end a line", tr.Size)
		}
	})
}

// Tail reads what was appended since the last call, leaves a torn line
// for the next one, and starts over on a file that was replaced.
func TestTail(t *testing.T) {
	dir := t.TempDir()
	w, err := Appender(dir, Header{Agent: "alice", Kind: "teammate", Session: "s"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	line := func(text string) string {
		b, _ := json.Marshal(Line{Type: "assistant", Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(text)}}})
		return string(b) + "\n"
	}
	io.WriteString(w, line("one"))
	path := filepath.Join(dir, FileName("alice"))
	ls, off, err := Tail(path, 0)
	if err != nil || len(ls) != 1 || ls[0].Message.Text() != "one" {
		t.Fatalf("Tail from 0 = %+v, %d, %v", ls, off, err)
	}
	io.WriteString(w, line("two"))
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"assis`) // torn
	f.Close()
	ls, off2, err := Tail(path, off)
	if err != nil || len(ls) != 1 || ls[0].Message.Text() != "two" || off2 <= off {
		t.Fatalf("Tail from %d = %+v, %d, %v; want only two", off, ls, off2, err)
	}
	if ls, off3, err := Tail(path, off2); err != nil || len(ls) != 0 || off3 != off2 {
		t.Errorf("Tail at the torn line = %+v, %d, %v; want nothing yet", ls, off3, err)
	}
	os.Remove(path)
	w2, _ := Appender(dir, Header{Agent: "alice", Kind: "teammate", Session: "s"}, time.Now())
	io.WriteString(w2, line("again"))
	if ls, _, err := Tail(path, off2); err != nil || len(ls) != 1 || ls[0].Message.Text() != "again" {
		t.Errorf("Tail of a replaced file = %+v, %v; want it read from the start", ls, err)
	}
}

// A user message that holds only tool results prints no empty "user:"
// line: its results have lines of their own.
func TestRenderSkipsEmptyUser(t *testing.T) {
	res := llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "t1", Text: "ok"}}}
	q := llm.UserText("fix it")
	var b strings.Builder
	err := RenderLines(&b, []Line{{Type: "user", Message: &q}, {Type: "user", Message: &res},
		{Type: "tool_result", ToolResult: &llm.Block{Type: llm.BlockToolResult, Text: "ok"}}}, func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); strings.Count(got, "user:") != 1 || !strings.Contains(got, "user: fix it") || !strings.Contains(got, "← ok") {
		t.Errorf("rendered:\n%s\nwant one user line and the result", got)
	}
}

// A message's text blocks (a prompt and the note queued after it) are
// rendered apart, a blank line between them, not run together.
func TestRenderSeparatesTextBlocks(t *testing.T) {
	q := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("say hi"), llm.Text("QUEUED-NOTE")}}
	a := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Hi."), llm.ToolUse("u1", "Bash", nil), llm.Text("Done\nnow.")}}
	var b strings.Builder
	err := RenderLines(&b, []Line{{Type: "user", Message: &q}, {Type: "assistant", Message: &a, Usage: &llm.Usage{InputTokens: 5, OutputTokens: 2}}},
		func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	want := "--:--:-- user: say hi\n\n         QUEUED-NOTE\n" +
		"--:--:-- assistant: Hi.\n\n         Done now.  [5 in, 2 out]\n"
	if got := b.String(); got != want {
		t.Errorf("rendered:\n%q\nwant\n%q", got, want)
	}
}
