package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/coordinator"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/session/record"
	"github.com/troupe-dev/troupe/task"
)

// sessionRun runs troupe with TROUPE_HOME=home, new sessions named id,
// and returns stdout and stderr.
func sessionRun(t *testing.T, home, cwd, id string, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	t.Cleanup(func() { // the task output folders of the runs in cwd
		if d, err := task.OutputDir("", kit.ProjectSlug(cwd), "x"); err == nil {
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
	out, stderr, err := sessionRun(t, home, dir, "session-1", nil, "-p", "--trust", "--coordinator", "--script", first, "--output-format", "stream-json", "FIRST prompt")
	if err != nil {
		t.Fatalf("first run: %v\n%s%s", err, out, stderr)
	}
	if s := summarize(t, out); !slices.Equal(s.tools, coordinatorTools()) {
		t.Fatalf("first run tools = %v; want the coordinator's", s.tools)
	}
	path := filepath.Join(home, "sessions", "session-1.jsonl")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("session file: %v, %v; want mode 0600", fi, err)
	}
	// Turn 1 holds only when the first exchange is in the request.
	second := writeScript(t, `{"turns": [{"match": {"system": "`+m+`", "turn": 1, "user": "SECOND"}, "reply": {"text": "SECOND-ANSWER"}}]}`)
	out, stderr, err = sessionRun(t, home, dir, "unused", nil, "-p", "--trust", "--resume", "session-1", "--script", second, "--output-format", "stream-json", "SECOND prompt")
	if err != nil {
		t.Fatalf("resumed run: %v\n%s%s", err, out, stderr)
	}
	s := summarize(t, out)
	if !slices.Equal(s.tools, coordinatorTools()) {
		t.Errorf("resumed run tools = %v; want the coordinator's %v", s.tools, coordinatorTools())
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
	rec, err := record.Parse(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, msg := range rec.Messages {
		texts = append(texts, msg.Text())
	}
	if want := []string{"FIRST prompt", "FIRST-ANSWER", "SECOND prompt", "SECOND-ANSWER"}; !slices.Equal(texts, want) || !rec.Header.Coordinator {
		t.Errorf("recorded conversation = %q (coordinator %v); want %q in coordinator mode", texts, rec.Header.Coordinator, want)
	}
	// The flag that matches says nothing.
	third := writeScript(t, `{"turns": [{"match": {"system": "`+m+`", "turn": 2}, "reply": {"text": "THIRD-ANSWER"}}]}`)
	if _, stderr, err = sessionRun(t, home, dir, "unused", nil, "-p", "--trust", "--coordinator", "--continue", "--script", third, "THIRD"); err != nil || strings.Contains(stderr, "recorded") {
		t.Errorf("--continue --coordinator: %v, stderr %q; want a quiet resume", err, stderr)
	}
}

// A session recorded without coordinator mode leaves it on resume, even
// with TROUPE_COORDINATOR_MODE=1 and --coordinator.
func TestResumeLeavesCoordinatorMode(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	coordinatorScratchpad(t, dir)
	first := writeScript(t, `{"turns": [{"match": {"turn": 0}, "reply": {"text": "PLAIN-ANSWER"}}]}`)
	if out, stderr, err := sessionRun(t, home, dir, "plain-1", nil, "-p", "--trust", "--script", first, "hello"); err != nil {
		t.Fatalf("first run: %v\n%s%s", err, out, stderr)
	}
	second := writeScript(t, `{"turns": [{"match": {"system": "You are troupe", "turn": 1}, "reply": {"text": "PLAIN-AGAIN"}}]}`)
	env := map[string]string{coordinator.EnvMode: "1"}
	out, stderr, err := sessionRun(t, home, dir, "unused", env, "-p", "--trust", "--coordinator", "--resume", "plain-1", "--script", second, "--output-format", "stream-json", "again")
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
	if _, _, err := sessionRun(t, home, dir, "known-1", nil, "-p", "--trust", "--script", script, "hi"); err != nil {
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
		_, _, err := sessionRun(t, home, dir, "x", nil, append(append([]string{"-p", "--trust", "--script", script}, tt.args...), "next")...)
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
	out, stderr, err := sessionRun(t, home, dir, "x", nil, "-p", "--trust", "--continue", "--script", script, "THREE")
	if err != nil {
		t.Fatalf("resume: %v\n%s%s", err, out, stderr)
	}
	if !strings.Contains(out, "THREE-ANSWER") || !strings.Contains(stderr, "session crash-1: resuming before its unfinished last turn (2 of 4 messages kept") {
		t.Errorf("stdout %q, stderr %q", out, stderr)
	}
	b, _ := os.ReadFile(path)
	rec, err := record.Parse(bytes.NewReader(b), path)
	if err != nil {
		t.Fatalf("the resumed file does not read back: %v\n%s", err, b)
	}
	var texts []string
	for _, m := range rec.Messages {
		texts = append(texts, m.Text())
	}
	if want := []string{"ONE", "ONE-ANSWER", "THREE", "THREE-ANSWER"}; !slices.Equal(texts, want) {
		t.Errorf("conversation read back = %q; want %q", texts, want)
	}
	if bytes.Contains(b, []byte(`{"type":"mess{`)) {
		t.Error("the cut line was not dropped before appending")
	}
}

// A session whose record has a line of 6 KB, 1 MB or 20 MB (one long
// answer) continues: the long answer is in the resumed conversation and
// the new exchange is recorded after it.
func TestResumeLongLines(t *testing.T) {
	for _, n := range []int{6 << 10, 1 << 20, 20 << 20} {
		home, dir := t.TempDir(), t.TempDir()
		long := make([]byte, n)
		for i := range long {
			long[i] = "abcdefghijklmnopqrstuvwxyz 0123456789"[i*7%37]
		}
		first := writeScript(t, `{"turns": [{"match": {"turn": 0}, "reply": {"text": "`+string(long)+`"}}]}`)
		if out, stderr, err := sessionRun(t, home, dir, "long-1", nil, "-p", "--trust", "--provider", "scripted", "--script", first, "--output-format", "json", "ONE"); err != nil {
			t.Fatalf("%d bytes: first run: %v\n%.300s%s", n, err, out, stderr)
		}
		// Turn 1 holds only when the first exchange came back from the record.
		second := writeScript(t, `{"turns": [{"match": {"turn": 1, "user": "TWO"}, "reply": {"text": "TWO-ANSWER"}}]}`)
		out, stderr, err := sessionRun(t, home, dir, "unused", nil, "-p", "--trust", "--provider", "scripted", "--continue", "--script", second, "TWO")
		if err != nil || strings.TrimSpace(out) != "TWO-ANSWER" {
			t.Fatalf("%d bytes: --continue: %v, stdout %.300q, stderr %q", n, err, out, stderr)
		}
		path := filepath.Join(home, "sessions", "long-1.jsonl")
		rec, err := record.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, m := range rec.Messages {
			texts = append(texts, m.Text())
		}
		if want := []string{"ONE", string(long), "TWO", "TWO-ANSWER"}; !slices.Equal(texts, want) {
			t.Errorf("%d bytes: recorded conversation has %d messages; want the long answer kept and the new exchange after it", n, len(texts))
		}
	}
}
