package claudelog

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
)

// assistant is an assistant line as Claude Code 2.1.328 writes it for a
// teammate (the fields read, and a few others).
func assistant(id, agent string, in, out int64) string {
	return `{"parentUuid":"p","isSidechain":false,"type":"assistant","teamName":"mixed","agentName":"` + agent +
		`","sessionId":"s-1","requestId":"req_1","cwd":"/w","message":{"id":"` + id + `","type":"message","role":"assistant","model":"claude-sonnet-4-5",` +
		`"content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":` + itoa(in) + `,"cache_creation_input_tokens":5,"cache_read_input_tokens":7,"output_tokens":` + itoa(out) +
		`,"output_tokens_details":{"thinking_tokens":0},"service_tier":"standard"}}}` + "\n"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// The follower reports each call appended since it started once (a call
// written as two lines too), waits for a torn line's end, reads a new
// transcript from its start, and names a malformed line without losing
// the calls after it.
func TestFollower(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "-w", "s-1.jsonl")
	appendTo(t, a, assistant("msg_before", "helper", 999, 999)) // before the follower: not its to report
	f := NewFollower(dir)
	if cs, err := f.Next(); err != nil || len(cs) != 0 {
		t.Fatalf("Next at the start = %v, %v; want nothing", cs, err)
	}
	appendTo(t, a, `{"type":"user","teamName":"mixed","agentName":"helper","message":{"role":"user","content":"go"}}`+"\n")
	appendTo(t, a, assistant("msg_1", "helper", 100, 10))
	appendTo(t, a, assistant("msg_1", "helper", 100, 10)) // its second content block
	torn := assistant("msg_2", "helper", 200, 20)
	appendTo(t, a, torn[:40])
	cs, err := f.Next()
	if err != nil || len(cs) != 1 {
		t.Fatalf("Next = %v, %v; want msg_1 once", cs, err)
	}
	want := Call{ID: "msg_1", Session: "s-1", Team: "mixed", Agent: "helper", Model: "claude-sonnet-4-5",
		Usage: llm.Usage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 7, CacheWriteTokens: 5}}
	if cs[0] != want {
		t.Errorf("call = %+v; want %+v", cs[0], want)
	}
	appendTo(t, a, torn[40:])
	appendTo(t, a, "{not json\n")
	appendTo(t, a, assistant("msg_3", "helper", 300, 30))
	b := filepath.Join(dir, "-other", "s-2.jsonl")
	appendTo(t, b, assistant("msg_4", "bob", 1, 1))
	cs, err = f.Next()
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "s-1.jsonl (appended line 2)") {
		t.Errorf("Next error = %v; want a malformed line named", err)
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID+"/"+c.Agent)
	}
	if got := strings.Join(ids, " "); got != "msg_4/bob msg_2/helper msg_3/helper" && got != "msg_2/helper msg_3/helper msg_4/bob" {
		t.Errorf("calls = %s; want msg_2, msg_3 (helper) and msg_4 (bob), once each", got)
	}
	if cs, err := f.Next(); err != nil || len(cs) != 0 {
		t.Errorf("Next with nothing new = %v, %v", cs, err)
	}
}

func TestParseLine(t *testing.T) {
	for _, tt := range []struct {
		line    string
		ok      bool
		wantErr bool
	}{
		{assistant("msg_1", "a", 1, 2), true, false},
		{`{"type":"assistant","message":{"id":"m","model":"x"}}`, false, false}, // no usage
		{`{"type":"summary","summary":"x"}`, false, false},
		{``, false, false},
		{`[1,2]`, false, true},
		{assistant("msg_1", "a", -1, 2), false, true},
		{`{"type":"assistant","message":{"id":"m","usage":{"output_tokens":"many"}}}`, false, true},
	} {
		_, ok, err := ParseLine([]byte(tt.line))
		if ok != tt.ok || (err != nil) != tt.wantErr {
			t.Errorf("ParseLine(%.60q) = %v, %v; want ok %v, error %v", tt.line, ok, err, tt.ok, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseLine(%.60q) error %v does not match ErrMalformed", tt.line, err)
		}
	}
}

// FuzzParseLine: no input panics; a call returned has an id and no
// negative count.
func FuzzParseLine(f *testing.F) {
	f.Add([]byte(assistant("msg_1", "helper", 100, 10)))
	f.Add([]byte(`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":-1}}}`))
	f.Add([]byte(`{"type":"user","message":{"content":"x"}}`))
	f.Add([]byte(`{"type":"assistant","message":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, ok, err := ParseLine(b)
		if err != nil && ok {
			t.Fatal("ok with an error")
		}
		if ok {
			u := c.Usage
			if c.ID == "" || u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
				t.Errorf("ParseLine returned %+v", c)
			}
		}
	})
}
