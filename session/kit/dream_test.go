package kit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/dream"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/session/record"
	"github.com/troupe-dev/troupe/task"
)

// A dream is due once enough sessions of the project were recorded since
// the last one (none yet counts as long ago); sessions of other folders
// and the current one do not count.
func TestDreamDue(t *testing.T) {
	home := t.TempDir()
	cwd, other := "/work/a", "/work/b"
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	add := func(id, where string) {
		l, err := record.Create(dir, record.Line{SessionID: id, Cwd: where, Provider: "scripted", Time: time.Now().UTC().Format(time.RFC3339Nano)}, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		if err := os.Mkdir(filepath.Join(dir, id), 0o700); err != nil { // its transcripts' folder
			t.Fatal(err)
		}
	}
	add("s-1", cwd)
	add("s-2", other)
	add("s-now", cwd)
	now := time.Now()
	for _, c := range []struct {
		need int
		want bool
	}{{1, true}, {2, false}} {
		got, err := DreamDue(home, cwd, "s-now", now, time.Hour, c.need)
		if err != nil || got != c.want {
			t.Errorf("DreamDue with %d sessions needed = %v, %v; want %v (one other session of the project)", c.need, got, err, c.want)
		}
	}
}

// A dream reads only its own project's sessions: with another project's
// records and transcripts beside them, the other's are neither listed in
// its prompt nor readable by its tools (Read, Grep over the sessions
// folder), while its own are.
func TestDreamReadsOnlyItsProject(t *testing.T) {
	home := t.TempDir()
	cwd, other := "/work/a", "/work/b"
	dir := filepath.Join(home, "sessions")
	add := func(id, where, text string) {
		l, err := record.Create(dir, record.Line{SessionID: id, Cwd: where, Provider: "scripted", Time: time.Now().UTC().Format(time.RFC3339Nano)}, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		if err := os.Mkdir(filepath.Join(dir, id), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id, "lead.jsonl"), []byte(`{"text":"`+text+`"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	add("s-mine", cwd, "OWN-FACT")
	add("s-theirs", other, "OTHER-SECRET")
	theirs := filepath.Join(dir, "s-theirs", "lead.jsonl")
	sc, err := scripted.Parse([]byte(`{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [
	    {"name": "Read", "input": {"file_path": "` + theirs + `"}},
	    {"name": "Read", "input": {"file_path": "` + filepath.Join(dir, "s-theirs.jsonl") + `"}},
	    {"name": "Grep", "input": {"pattern": "OTHER-SECRE[T]", "path": "` + dir + `", "output_mode": "content"}},
	    {"name": "Read", "input": {"file_path": "` + filepath.Join(dir, "s-mine", "lead.jsonl") + `"}}]}},
	  {"match": {"turn": 1, "user": "OTHER-SECRET"}, "reply": {"tool_calls": [{"name": "Write", "input": {"file_path": "MEMORY.md", "content": "LEAKED\n"}}]}},
	  {"match": {"turn": 1, "user": "OWN-FACT"}, "reply": {"tool_calls": [{"name": "Write", "input": {"file_path": "MEMORY.md", "content": "CLEAN\n"}}]}},
	  {"match": {"turn": 1}, "reply": {"tool_calls": [{"name": "Write", "input": {"file_path": "MEMORY.md", "content": "READ NOTHING\n"}}]}},
	  {"reply": {"text": "done"}, "repeat": true}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Dream(home, cwd, "", scripted.New(sc), "scripted")
	reg := task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		reg.Close(ctx)
	}()
	sub := reg.Subscribe()
	defer sub.Close()
	id, err := dream.Start(reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.State.ID != id || e.Kind != task.EventTerminated {
			continue
		}
		d, _ := task.DetailAs[*task.DreamDetail](e.State)
		if e.State.Status != task.Completed || d == nil || d.SessionsReviewing != 1 {
			t.Fatalf("dream ended %s (%s), detail %+v; want completed over the one session of the project", e.State.Status, e.State.Description, d)
		}
		break
	}
	b, err := os.ReadFile(filepath.Join(cfg.MemoryDir, "MEMORY.md"))
	if err != nil || string(b) != "CLEAN\n" {
		t.Errorf("MEMORY.md = %q, %v; want CLEAN (the dream read its own session and nothing of the other project's)", b, err)
	}
}
