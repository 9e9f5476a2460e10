package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/coordinator"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/task"
)

// sessionRun runs troupe with TROUPE_HOME=home, new sessions named id,
// and returns stdout and stderr.
func sessionRun(t *testing.T, home, cwd, id string, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	t.Cleanup(func() { // the task output folders of the runs in cwd
		if d, err := task.OutputDir("", projectSlug(cwd), "x"); err == nil {
			os.RemoveAll(filepath.Dir(filepath.Dir(d)))
		}
	})
	var out, errOut bytes.Buffer
	m := &Main{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		Getenv: func(k string) string {
			if k == "TROUPE_HOME" {
				return home
			}
			return env[k]
		},
		HomeDir: func() (string, error) { return t.TempDir(), nil },
		Getwd:   func() (string, error) { return cwd, nil },
		Now:     func() time.Time { return time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC) },
		NewID:   func() string { return id },
		Version: "v0.0.0-test",
	}
	err := m.Run(t.Context(), args)
	return out.String(), errOut.String(), err
}

// writeScript writes a scripted-model script and returns its path.
func writeScript(t *testing.T, js string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A session recorded in coordinator mode resumes in it without the flag
// (the coordinator's tools on the init line, its system prompt, the old
// conversation before the new prompt), with a notice on stderr; the
// session file grows by the new exchange.
func TestResumeCoordinatorSession(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	coordinatorScratchpad(t, dir)
	m := coordinator.Marker
	first := writeScript(t, `{"turns": [{"match": {"system": "`+m+`", "turn": 0, "user": "FIRST"}, "reply": {"text": "FIRST-ANSWER"}}]}`)
	out, stderr, err := sessionRun(t, home, dir, "session-1", nil, "-p", "--coordinator", "--script", first, "--output-format", "stream-json", "FIRST prompt")
	if err != nil {
		t.Fatalf("first run: %v\n%s%s", err, out, stderr)
	}
	if s := summarize(t, out); !slices.Equal(s.tools, coordinator.LeadTools) {
		t.Fatalf("first run tools = %v; want the coordinator's", s.tools)
	}
	path := filepath.Join(home, "sessions", "session-1.jsonl")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("session file: %v, %v; want mode 0600", fi, err)
	}
	// Turn 1 holds only when the first exchange is in the request.
	second := writeScript(t, `{"turns": [{"match": {"system": "`+m+`", "turn": 1, "user": "SECOND"}, "reply": {"text": "SECOND-ANSWER"}}]}`)
	out, stderr, err = sessionRun(t, home, dir, "unused", nil, "-p", "--resume", "session-1", "--script", second, "--output-format", "stream-json", "SECOND prompt")
	if err != nil {
		t.Fatalf("resumed run: %v\n%s%s", err, out, stderr)
	}
	s := summarize(t, out)
	if !slices.Equal(s.tools, coordinator.LeadTools) {
		t.Errorf("resumed run tools = %v; want the coordinator's %v", s.tools, coordinator.LeadTools)
	}
	if want := "resumed session session-1 was recorded in coordinator mode; coordinator mode on"; !strings.Contains(stderr, want) {
		t.Errorf("stderr = %q; want %q", stderr, want)
	}
	last := s.lines[len(s.lines)-1]
	if last["result"] != "SECOND-ANSWER" || last["session_id"] != "session-1" {
		t.Errorf("last line = %v; want SECOND-ANSWER in session-1", last)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := parseSession(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, msg := range rec.messages {
		texts = append(texts, msg.Text())
	}
	if want := []string{"FIRST prompt", "FIRST-ANSWER", "SECOND prompt", "SECOND-ANSWER"}; !slices.Equal(texts, want) || !rec.header.Coordinator {
		t.Errorf("recorded conversation = %q (coordinator %v); want %q in coordinator mode", texts, rec.header.Coordinator, want)
	}
	// The flag that matches says nothing.
	third := writeScript(t, `{"turns": [{"match": {"system": "`+m+`", "turn": 2}, "reply": {"text": "THIRD-ANSWER"}}]}`)
	if _, stderr, err = sessionRun(t, home, dir, "unused", nil, "-p", "--coordinator", "--continue", "--script", third, "THIRD"); err != nil || strings.Contains(stderr, "recorded") {
		t.Errorf("--continue --coordinator: %v, stderr %q; want a quiet resume", err, stderr)
	}
}

// A session recorded without coordinator mode leaves it on resume, even
// with TROUPE_COORDINATOR_MODE=1 and --coordinator.
func TestResumeLeavesCoordinatorMode(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	coordinatorScratchpad(t, dir)
	first := writeScript(t, `{"turns": [{"match": {"turn": 0}, "reply": {"text": "PLAIN-ANSWER"}}]}`)
	if out, stderr, err := sessionRun(t, home, dir, "plain-1", nil, "-p", "--script", first, "hello"); err != nil {
		t.Fatalf("first run: %v\n%s%s", err, out, stderr)
	}
	second := writeScript(t, `{"turns": [{"match": {"system": "You are troupe", "turn": 1}, "reply": {"text": "PLAIN-AGAIN"}}]}`)
	env := map[string]string{coordinator.EnvMode: "1"}
	out, stderr, err := sessionRun(t, home, dir, "unused", env, "-p", "--coordinator", "--resume", "plain-1", "--script", second, "--output-format", "stream-json", "again")
	if err != nil {
		t.Fatalf("resumed run: %v\n%s%s", err, out, stderr)
	}
	s := summarize(t, out)
	if slices.Equal(s.tools, coordinator.LeadTools) || !slices.Contains(s.tools, "Read") || !slices.Contains(s.tools, "Bash") {
		t.Errorf("resumed run tools = %v; want the normal tool set", s.tools)
	}
	if want := "resumed session plain-1 was recorded without coordinator mode; coordinator mode off"; !strings.Contains(stderr, want) {
		t.Errorf("stderr = %q; want %q", stderr, want)
	}
	if last := s.lines[len(s.lines)-1]; last["result"] != "PLAIN-AGAIN" {
		t.Errorf("last line = %v", last)
	}
}

func TestResumeErrors(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	script := writeScript(t, `{"turns": [{"reply": {"text": "ok"}, "repeat": true}]}`)
	if _, _, err := sessionRun(t, home, dir, "known-1", nil, "-p", "--script", script, "hi"); err != nil {
		t.Fatal(err)
	}
	sessDir := filepath.Join(home, "sessions")
	for _, tt := range []struct {
		name  string
		setup func()
		args  []string
		want  []string
	}{
		{name: "unknown id", args: []string{"--resume", "nope"},
			want: []string{"--resume nope: no such session in " + sessDir, "session_id", "--output-format json", "Latest sessions of " + dir + ": known-1"}},
		{name: "bad id", args: []string{"--resume", "../x"}, want: []string{`--resume "../x": not a session id`}},
		{name: "both", args: []string{"--resume", "known-1", "--continue"}, want: []string{"give one of them"}},
		{name: "corrupt", args: []string{"--resume", "bad-1"}, setup: func() {
			os.WriteFile(filepath.Join(sessDir, "bad-1.jsonl"), []byte(`{"type":"session","version":1,"session_id":"bad-1","cwd":"`+dir+`"}`+"\n"+`{"type":"message","message":{"role":"user","content":[]}}`+"\n{oops\n"), 0o600)
		}, want: []string{"session file " + filepath.Join(sessDir, "bad-1.jsonl") + " line 3: not a JSON object"}},
		{name: "other folder", args: []string{"--resume", "elsewhere-1"}, setup: func() {
			os.WriteFile(filepath.Join(sessDir, "elsewhere-1.jsonl"), []byte(`{"type":"session","version":1,"session_id":"elsewhere-1","cwd":"/somewhere/else"}`+"\n"), 0o600)
		}, want: []string{"session elsewhere-1 was recorded in /somewhere/else", "--cwd /somewhere/else"}},
		{name: "continue elsewhere", args: []string{"--continue", "--cwd", t.TempDir()}, want: []string{"--continue: no session was recorded in"}},
	} {
		if tt.setup != nil {
			tt.setup()
		}
		_, _, err := sessionRun(t, home, dir, "x", nil, append(append([]string{"-p", "--script", script}, tt.args...), "next")...)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tt.name, err, w)
			}
		}
	}
}

// A session whose last turn did not finish (a crash after a tool call,
// its last line cut short) resumes from its last finished turn, says so,
// and records the repair so that the file reads back whole.
func TestResumeUnfinishedTurn(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	sessDir := filepath.Join(home, "sessions")
	os.MkdirAll(sessDir, 0o700)
	path := filepath.Join(sessDir, "crash-1.jsonl")
	lines := []string{
		`{"type":"session","version":1,"session_id":"crash-1","cwd":"` + dir + `","provider":"scripted"}`,
		`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"ONE"}]}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"ONE-ANSWER"}]}}`,
		`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"TWO"}]}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}`,
	}
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"+`{"type":"mess`), 0o600)
	script := writeScript(t, `{"turns": [{"match": {"turn": 1, "user": "THREE"}, "reply": {"text": "THREE-ANSWER"}}]}`)
	out, stderr, err := sessionRun(t, home, dir, "x", nil, "-p", "--continue", "--script", script, "THREE")
	if err != nil {
		t.Fatalf("resume: %v\n%s%s", err, out, stderr)
	}
	if !strings.Contains(out, "THREE-ANSWER") || !strings.Contains(stderr, "session crash-1: resuming before its unfinished last turn (2 of 4 messages kept") {
		t.Errorf("stdout %q, stderr %q", out, stderr)
	}
	b, _ := os.ReadFile(path)
	rec, err := parseSession(bytes.NewReader(b), path)
	if err != nil {
		t.Fatalf("the resumed file does not read back: %v\n%s", err, b)
	}
	var texts []string
	for _, m := range rec.messages {
		texts = append(texts, m.Text())
	}
	if want := []string{"ONE", "ONE-ANSWER", "THREE", "THREE-ANSWER"}; !slices.Equal(texts, want) {
		t.Errorf("conversation read back = %q; want %q", texts, want)
	}
	if bytes.Contains(b, []byte(`{"type":"mess{`)) {
		t.Error("the cut line was not dropped before appending")
	}
}

func TestParseSession(t *testing.T) {
	hdr := `{"type":"session","version":1,"session_id":"s1","cwd":"/w","coordinator":true,"provider":"anthropic","model":"m"}`
	msg := func(role, text string) string {
		b, _ := json.Marshal(sessionLine{Type: "message", Message: &llm.Message{Role: llm.Role(role), Content: []llm.Block{llm.Text(text)}}})
		return string(b)
	}
	reset, _ := json.Marshal(sessionLine{Type: "reset", Messages: []llm.Message{llm.UserText("summary")}})
	for _, tt := range []struct {
		name, in string
		texts    []string
		err      string
	}{
		{name: "header only", in: hdr + "\n"},
		{name: "messages", in: hdr + "\n" + msg("user", "a") + "\n" + msg("assistant", "b") + "\n", texts: []string{"a", "b"}},
		{name: "reset", in: hdr + "\n" + msg("user", "a") + "\n" + string(reset) + "\n" + msg("assistant", "b") + "\n", texts: []string{"summary", "b"}},
		{name: "cut last line", in: hdr + "\n" + msg("user", "a") + "\n" + `{"type":"message","mes`, texts: []string{"a"}},
		{name: "empty", in: "", err: "f.jsonl: no complete session line"},
		{name: "no header", in: msg("user", "a") + "\n", err: `f.jsonl line 1: type "message": the first line must be the session line`},
		{name: "bad version", in: strings.Replace(hdr, `"version":1`, `"version":7`, 1) + "\n", err: "line 1: version 7: want 1"},
		{name: "bad id", in: strings.Replace(hdr, `"s1"`, `"../s"`, 1) + "\n", err: `line 1: session_id "../s"`},
		{name: "relative cwd", in: strings.Replace(hdr, `"/w"`, `"w"`, 1) + "\n", err: `line 1: cwd "w": want an absolute path`},
		{name: "unknown type", in: hdr + "\n" + `{"type":"x"}` + "\n", err: `line 2: unknown type "x"`},
		{name: "bad role", in: hdr + "\n" + msg("system", "a") + "\n", err: `line 2: message role "system"`},
		{name: "no message", in: hdr + "\n" + `{"type":"message"}` + "\n", err: "line 2: a message line without its message"},
		{name: "second header", in: hdr + "\n" + hdr + "\n", err: "line 2: a second session line"},
		{name: "garbage", in: hdr + "\n" + "not json\n", err: "line 2: not a JSON object"},
	} {
		s, err := parseSession(strings.NewReader(tt.in), "f.jsonl")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err = %v; want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var texts []string
		for _, m := range s.messages {
			texts = append(texts, m.Text())
		}
		if !slices.Equal(texts, tt.texts) || s.header.SessionID != "s1" || !s.header.Coordinator || s.header.Model != "m" {
			t.Errorf("%s: messages %q, header %+v", tt.name, texts, s.header)
		}
		if want := int64(strings.LastIndexByte(tt.in, '\n') + 1); s.size != want {
			t.Errorf("%s: size = %d; want %d (the complete lines)", tt.name, s.size, want)
		}
	}
}

// FuzzParseSession: the parser never panics, and what it accepts is
// written back (one line each) to a file that parses to the same thing.
func FuzzParseSession(f *testing.F) {
	hdr := `{"type":"session","version":1,"session_id":"s1","cwd":"/w"}` + "\n"
	f.Add(hdr)
	f.Add(hdr + `{"type":"message","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}` + "\n")
	f.Add(hdr + `{"type":"reset","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Read","input":{}}]}]}` + "\n")
	f.Add(hdr + `{"type":"message","message":{"role":"user","content":[]}}` + "\n" + `{"type":"mess`)
	f.Add(hdr + `{"type":"message","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","images":[{"media_type":"image/png","data":"iVBORw0KGgo="}]}]}}` + "\n")
	f.Add(hdr + `{"type":"message"}` + "\n")
	f.Add("")
	f.Add("\n\n")
	f.Add(`{"type":"session","version":1,"session_id":"s1","cwd":"/w"}`)
	f.Fuzz(func(t *testing.T, in string) {
		s, err := parseSession(strings.NewReader(in), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "session file f") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if s.size > int64(len(in)) || (s.size > 0 && in[s.size-1] != '\n') {
			t.Fatalf("size %d is not the end of a line of %q", s.size, in)
		}
		var b bytes.Buffer
		for _, l := range []sessionLine{s.header, {Type: "reset", Messages: s.messages}} {
			line, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
		again, err := parseSession(&b, "f")
		if err != nil {
			t.Fatalf("written back, it does not parse: %v\n%s", err, b.String())
		}
		if !reflect.DeepEqual(again.header, s.header) || len(again.messages) != len(s.messages) {
			t.Fatalf("round trip changed it: %+v %d vs %+v %d", again.header, len(again.messages), s.header, len(s.messages))
		}
	})
}

// --continue takes the session of the working folder written last;
// sessions of other folders and unreadable files are skipped.
func TestListSessions(t *testing.T) {
	dir := t.TempDir()
	write := func(id, cwd string, age time.Duration) {
		p := filepath.Join(dir, id+".jsonl")
		os.WriteFile(p, []byte(`{"type":"session","version":1,"session_id":"`+id+`","cwd":"`+cwd+`"}`+"\n"), 0o600)
		at := time.Now().Add(-age)
		os.Chtimes(p, at, at)
	}
	write("old", "/w", time.Hour)
	write("new", "/w", time.Minute)
	write("other", "/elsewhere", 0)
	os.WriteFile(filepath.Join(dir, "broken.jsonl"), []byte("{"), 0o600)
	var ids []string
	for _, s := range listSessions(dir, "/w") {
		ids = append(ids, s.id)
	}
	if want := []string{"new", "old"}; !slices.Equal(ids, want) {
		t.Errorf("listSessions = %v; want %v", ids, want)
	}
}

// A compaction is recorded as a reset to the lead's new conversation, and
// reading the file back gives that conversation.
func TestSessionLogCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	l := &sessionLog{f: f, path: path, stderr: &stderr}
	l.write(sessionLine{Type: "session", Version: sessionVersion, SessionID: "s1", Cwd: "/w"})
	q, a := llm.UserText("question"), llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("answer")}}
	l.event(agent.Event{Type: agent.EventUser, Message: &q})
	l.event(agent.Event{Type: agent.EventDelta, Text: "ans"})
	l.event(agent.Event{Type: agent.EventAssistant, Message: &a})
	summary := llm.UserText("summary")
	l.messages = func() []llm.Message { return []llm.Message{summary, a} }
	l.event(agent.Event{Type: agent.EventCompact, Text: "summary"})
	l.close()
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	s, err := loadSession(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.messages) != 2 || s.messages[0].Text() != "summary" || s.messages[1].Text() != "answer" {
		t.Errorf("conversation read back = %+v; want the compacted one", s.messages)
	}
	// A write after the file is gone is reported once, at close.
	l2 := &sessionLog{f: f, path: path, stderr: &stderr} // f is closed
	l2.write(sessionLine{Type: "message", Message: &q})
	l2.close()
	if !strings.Contains(stderr.String(), "the session record is incomplete: record session in "+path) {
		t.Errorf("stderr = %q; want the failed record named", stderr.String())
	}
}
