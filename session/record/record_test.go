package record

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
)

func TestParseSession(t *testing.T) {
	hdr := `{"type":"session","version":1,"session_id":"s1","cwd":"/w","coordinator":true,"provider":"anthropic","model":"m"}`
	msg := func(role, text string) string {
		b, _ := json.Marshal(Line{Type: "message", Message: &llm.Message{Role: llm.Role(role), Content: []llm.Block{llm.Text(text)}}})
		return string(b)
	}
	reset, _ := json.Marshal(Line{Type: "reset", Messages: []llm.Message{llm.UserText("summary")}})
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
		s, err := Parse(strings.NewReader(tt.in), "f.jsonl")
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
		for _, m := range s.Messages {
			texts = append(texts, m.Text())
		}
		if !slices.Equal(texts, tt.texts) || s.Header.SessionID != "s1" || !s.Header.Coordinator || s.Header.Model != "m" {
			t.Errorf("%s: messages %q, header %+v", tt.name, texts, s.Header)
		}
		if want := int64(strings.LastIndexByte(tt.in, '\n') + 1); s.Size != want {
			t.Errorf("%s: size = %d; want %d (the complete lines)", tt.name, s.Size, want)
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
	sub := `{"type":"remote","remote":{"event":"submitted","id":"r0123abcd","description":"train","labels":["gpu","linux"],"max_attempts":2,"time":"2026-12-03T16:00:00Z"}}` + "\n"
	f.Add(hdr + sub)
	f.Add(hdr + sub + `{"type":"remote","remote":{"event":"started","id":"r0123abcd","worker":"lab2","attempt":1}}` + "\n" +
		`{"type":"remote","remote":{"event":"ended","id":"r0123abcd","worker":"lab2","attempt":1,"status":"completed","summary":"done"}}` + "\n")
	f.Add(hdr + sub + `{"type":"remote","remote":{"event":"ended","id":"r0123abcd","status":"lost"}}` + "\n")
	f.Add(hdr + `{"type":"remote","remote":{"event":"started","id":"r0123abcd"}}` + "\n")
	f.Add(hdr + sub + sub)
	f.Add(hdr + `{"type":"remote"}` + "\n")
	f.Add(hdr + `{"type":"remote","remote":{"event":"submitted","id":"r0123abcd","labels":["a b"]}}` + "\n")
	f.Add(hdr + `{"type":"schedule","schedule":{"jobs":[{"id":"a1","cron":"*/5 * * * *","prompt":"p","recurring":true,"created":"2026-12-07T10:00:00Z"}],"wakeup":{"at":"2026-12-07T10:05:00Z","prompt":"w","set":"2026-12-07T10:00:00Z"}}}` + "\n")
	f.Add(hdr + `{"type":"schedule","schedule":{"jobs":[{"id":"a1","cron":"61 * * * *","prompt":"p"}]}}` + "\n")
	f.Add(hdr + `{"type":"schedule"}` + "\n")
	long := `{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("0123456789", 700) + `"}]}}` + "\n"
	f.Add(hdr + long)               // a line longer than a read buffer
	f.Add(hdr + long + long[:5000]) // and a torn one after it
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(strings.NewReader(in), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "session file f") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if s.Size > int64(len(in)) || (s.Size > 0 && in[s.Size-1] != '\n') {
			t.Fatalf("size %d is not the end of a line of %q", s.Size, in)
		}
		var b bytes.Buffer
		for _, l := range append([]Line{s.Header, {Type: "reset", Messages: s.Messages}}, s.remoteLines()...) {
			line, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
		again, err := Parse(&b, "f")
		if err != nil {
			t.Fatalf("written back, it does not parse: %v\n%s", err, b.String())
		}
		if !reflect.DeepEqual(again.Header, s.Header) || len(again.Messages) != len(s.Messages) {
			t.Fatalf("round trip changed it: %+v %d vs %+v %d", again.Header, len(again.Messages), s.Header, len(s.Messages))
		}
		if !reflect.DeepEqual(again.Remote, s.Remote) {
			t.Fatalf("round trip changed the remote jobs: %+v vs %+v", again.Remote, s.Remote)
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
	for _, s := range List(dir, "/w") {
		ids = append(ids, s.ID)
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
	l := &Log{f: f, path: path, stderr: &stderr}
	l.write(Line{Type: "session", Version: Version, SessionID: "s1", Cwd: "/w"})
	q, a := llm.UserText("question"), llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("answer")}}
	l.Event(agent.Event{Type: agent.EventUser, Message: &q})
	l.Event(agent.Event{Type: agent.EventDelta, Text: "ans"})
	l.Event(agent.Event{Type: agent.EventAssistant, Message: &a})
	summary := llm.UserText("summary")
	l.messages = func() []llm.Message { return []llm.Message{summary, a} }
	l.Event(agent.Event{Type: agent.EventCompact, Text: "summary"})
	l.Close()
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Messages) != 2 || s.Messages[0].Text() != "summary" || s.Messages[1].Text() != "answer" {
		t.Errorf("conversation read back = %+v; want the compacted one", s.Messages)
	}
	// A write after the file is gone is reported once, at close.
	l2 := &Log{f: f, path: path, stderr: &stderr} // f is closed
	l2.write(Line{Type: "message", Message: &q})
	l2.Close()
	if !strings.Contains(stderr.String(), "the session record is incomplete: record session in "+path) {
		t.Errorf("stderr = %q; want the failed record named", stderr.String())
	}
}

// Create never writes over an existing record; Append drops a last line a
// crash cut short and records a repaired conversation as a reset.
func TestCreateAndAppend(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	var stderr bytes.Buffer
	l, err := Create(dir, Line{SessionID: "s1", Cwd: "/w", Provider: "scripted"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	q := llm.UserText("first")
	l.Event(agent.Event{Type: agent.EventUser, Message: &q})
	l.Close()
	if fi, err := os.Stat(Path(dir, "s1")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record file: %v, %v; want mode 0600", fi, err)
	}
	if _, err := Create(dir, Line{SessionID: "s1", Cwd: "/w"}, &stderr); err == nil {
		t.Error("Create over an existing record succeeded")
	}
	if _, err := Create(dir, Line{SessionID: "../x", Cwd: "/w"}, &stderr); err == nil || !strings.Contains(err.Error(), "cannot name a file") {
		t.Errorf("Create with a bad id = %v", err)
	}
	f, _ := os.OpenFile(Path(dir, "s1"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"message","mes`) // a crash mid-line
	f.Close()
	prev, err := Load(Path(dir, "s1"))
	if err != nil || len(prev.Messages) != 1 {
		t.Fatalf("Load = %+v, %v", prev, err)
	}
	l, err = Append(Path(dir, "s1"), prev, []llm.Message{llm.UserText("repaired")}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	a := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("answer")}}
	l.Event(agent.Event{Type: agent.EventAssistant, Message: &a})
	l.Close()
	again, err := Load(Path(dir, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range again.Messages {
		texts = append(texts, m.Text())
	}
	if !slices.Equal(texts, []string{"repaired", "answer"}) || again.Header.Provider != "scripted" {
		t.Errorf("after Append: %q, header %+v", texts, again.Header)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestParseLongLines: a message line of 6 KB, 1 MB or 20 MB (one long
// answer, one large file read) is read whole, and a torn last line after
// it is still dropped.
func TestParseLongLines(t *testing.T) {
	hdr := `{"type":"session","version":1,"session_id":"s1","cwd":"/w"}` + "\n"
	for _, n := range []int{6 << 10, 1 << 20, 20 << 20} {
		text := varied(n-2) + "é" // a multi-byte rune at the end
		b, err := json.Marshal(Line{Type: "message", Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(text)}}})
		if err != nil {
			t.Fatal(err)
		}
		in := hdr + string(b) + "\n" + `{"type":"message","message":{"role":"user","content":[{"type":"text","text":"cut`
		s, err := Parse(strings.NewReader(in), "f.jsonl")
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if len(s.Messages) != 1 || s.Messages[0].Text() != text {
			t.Fatalf("%d bytes: %d messages, first of %d bytes", n, len(s.Messages), len(s.Messages[0].Text()))
		}
		if want := int64(len(hdr) + len(b) + 1); s.Size != want {
			t.Fatalf("%d bytes: size = %d; want %d (the torn line is not counted)", n, s.Size, want)
		}
	}
}

// TestParseLineTooLong: a line over the bound is an error naming the
// file and the line, not a read of all of it.
func TestParseLineTooLong(t *testing.T) {
	hdr := `{"type":"session","version":1,"session_id":"s1","cwd":"/w"}` + "\n"
	r := io.MultiReader(strings.NewReader(hdr), io.LimitReader(repeatReader('x'), maxLine+1))
	_, err := Parse(r, "f.jsonl")
	if err == nil || !strings.Contains(err.Error(), "session file f.jsonl line 2: line too long") {
		t.Fatalf("err = %v; want the long line named", err)
	}
}

// repeatReader reads as c for ever.
type repeatReader byte

func (c repeatReader) Read(p []byte) (int, error) {
	chunk := bytes.Repeat([]byte{byte(c)}, 64<<10)
	n := 0
	for n < len(p) {
		n += copy(p[n:], chunk)
	}
	return n, nil
}

// varied returns n bytes of text that does not repeat within a read
// buffer's length, so that a reader mixing up its pieces is caught.
func varied(n int) string {
	b := make([]byte, 100_003) // a prime: no buffer size divides it
	x := uint32(1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return strings.Repeat(string(b), n/len(b)+1)[:n]
}
