package record

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/remote/remotetest"
	"github.com/troupe-dev/troupe/task"
)

func TestParseRemote(t *testing.T) {
	hdr := `{"type":"session","version":1,"session_id":"s1","cwd":"/w"}` + "\n"
	sub := `{"type":"remote","remote":{"event":"submitted","id":"r0123abcd","description":"train","labels":["gpu"],"max_attempts":2}}` + "\n"
	line := func(body string) string { return `{"type":"remote","remote":{` + body + `}}` + "\n" }
	for _, tt := range []struct {
		name, in string
		want     []RemoteJob
		err      string
	}{
		{name: "submitted", in: hdr + sub, want: []RemoteJob{{ID: "r0123abcd", Description: "train", Labels: []string{"gpu"}, MaxAttempts: 2}}},
		{name: "ended", in: hdr + sub + line(`"event":"started","id":"r0123abcd","worker":"lab2","attempt":1`) + line(`"event":"ended","id":"r0123abcd","status":"completed","summary":"ok"`),
			want: []RemoteJob{{ID: "r0123abcd", Description: "train", Labels: []string{"gpu"}, MaxAttempts: 2, Worker: "lab2", Attempt: 1, Status: "completed", Summary: "ok"}}},
		{name: "no body", in: hdr + `{"type":"remote"}` + "\n", err: "line 2: a remote line without its remote object"},
		{name: "bad id", in: hdr + line(`"event":"submitted","id":"../x"`), err: `line 2: remote job id "../x"`},
		{name: "bad event", in: hdr + sub + line(`"event":"lost","id":"r0123abcd"`), err: `line 3: remote job r0123abcd: event "lost"`},
		{name: "twice", in: hdr + sub + sub, err: "line 3: remote job r0123abcd submitted twice"},
		{name: "not submitted", in: hdr + line(`"event":"started","id":"r0123abcd"`), err: "line 2: remote job r0123abcd started before a line says it was submitted"},
		{name: "bad status", in: hdr + sub + line(`"event":"ended","id":"r0123abcd","status":"running"`), err: `line 3: remote job r0123abcd: status "running"`},
		{name: "after end", in: hdr + sub + line(`"event":"ended","id":"r0123abcd","status":"killed"`) + line(`"event":"started","id":"r0123abcd"`), err: "line 4: remote job r0123abcd started after its end (killed)"},
		{name: "bad label", in: hdr + line(`"event":"submitted","id":"r0123abcd","labels":["a b"]`), err: `line 2: remote job r0123abcd: remote: bad job: label "a b"`},
		{name: "bad attempts", in: hdr + line(`"event":"submitted","id":"r0123abcd","max_attempts":-1`), err: "max_attempts -1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(strings.NewReader(tt.in), "f.jsonl")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Parse = %v; want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(s.Remote, tt.want, func(a, b RemoteJob) bool {
				return a.ID == b.ID && a.Description == b.Description && slices.Equal(a.Labels, b.Labels) && a.MaxAttempts == b.MaxAttempts &&
					a.Worker == b.Worker && a.Attempt == b.Attempt && a.Status == b.Status && a.Summary == b.Summary
			}) {
				t.Errorf("Remote = %+v; want %+v", s.Remote, tt.want)
			}
		})
	}
}

// A lead's remote jobs go into its record as they are submitted, start
// and end (through a real client, queue in memory and worker), and read
// back; a job whose submission failed is not recorded.
func TestRecordRemoteJobs(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	l, err := Create(dir, Line{SessionID: "s1", Cwd: "/w"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	reg := task.New(task.Config{PollInterval: -1})
	sub := reg.Subscribe()
	l.FollowRemote(reg, nil, time.Now)
	mem := remotetest.New(time.Second, time.Second)
	lead, wconn := mem.Conn(), mem.Conn()
	c, err := remote.NewClient(remote.ClientConfig{Queue: lead, Workers: lead, Tasks: reg, CheckEvery: 50 * time.Millisecond, OnSubmit: l.RemoteSubmitted})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", MaxSummary) // clipped at a rune boundary
	w, err := remote.NewWorker(remote.WorkerConfig{Name: "lab2", Labels: []string{"gpu"}, Queue: wconn, Registry: wconn, Heartbeat: 50 * time.Millisecond,
		Run: func(_ context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
			if j.Prompt == "fail" {
				return remote.Result{Error: "it broke"}
			}
			return remote.Result{Text: long}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	for ok := false; !ok; time.Sleep(5 * time.Millisecond) {
		ok, _ = remote.Alive(t.Context(), lead, "lab2")
	}
	a, err := c.Submit(t.Context(), remote.Request{Description: "train", Prompt: "go", Labels: []string{"gpu"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Submit(t.Context(), remote.Request{Description: "break", Prompt: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(t.Context(), remote.Request{Description: "nowhere", Prompt: "p", Labels: []string{"tpu"}}); err == nil {
		t.Fatal("a job no worker can take was submitted")
	}
	for ended := 0; ended < 2; {
		e, err := sub.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == task.EventTerminated {
			ended++
		}
	}
	cancel()
	<-done
	c.Close()
	reg.Close(context.Background())
	l.Close()
	if stderr.Len() > 0 {
		t.Fatalf("stderr: %s", stderr.String())
	}
	f, err := Load(Path(dir, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Remote) != 2 {
		t.Fatalf("recorded jobs %+v; want the two submitted", f.Remote)
	}
	ja, jb := f.Remote[0], f.Remote[1]
	if ja.ID != string(a.ID) || ja.Description != "train" || !slices.Equal(ja.Labels, []string{"gpu"}) || ja.MaxAttempts != 1 ||
		ja.Worker != "lab2" || ja.Attempt != 1 || ja.Status != "completed" || ja.Submitted == "" {
		t.Errorf("first job %+v", ja)
	}
	if len(ja.Summary) > MaxSummary+len(" […]") || !strings.HasSuffix(ja.Summary, "é […]") {
		t.Errorf("summary of %d bytes ends %q; want it clipped at a rune boundary", len(ja.Summary), ja.Summary[max(0, len(ja.Summary)-10):])
	}
	if jb.ID != string(b.ID) || jb.Status != "failed" || jb.Summary != "it broke" || jb.Open() {
		t.Errorf("second job %+v", jb)
	}
	if d := jb.Describe(); !strings.Contains(d, string(b.ID)+` "break" on worker lab2: failed: it broke`) {
		t.Errorf("Describe = %q", d)
	}
}

// TestResumeNote tells a resumed lead of every remote job of its record:
// an ended one as recorded, without a look at the store; an open one
// re-attached, unknown to the store, or not looked up (with the reason).
func TestResumeNote(t *testing.T) {
	jobs := []RemoteJob{
		{ID: "r1", Description: "done job", Status: "completed", Summary: "all green"},
		{ID: "r2", Description: "still queued"},
		{ID: "r3", Description: "forgotten"},
		{ID: "r4", Description: "no store"},
	}
	var asked []string
	note := ResumeNote(jobs, func(j RemoteJob) error {
		asked = append(asked, j.ID)
		switch j.ID {
		case "r3":
			return remote.ErrUnknownJob
		case "r4":
			return ErrNoRemoteStore
		}
		return nil
	})
	if want := []string{"r2", "r3", "r4"}; !slices.Equal(asked, want) {
		t.Errorf("re-attached %q; want the open jobs %q", asked, want)
	}
	lines := strings.Split(note, "\n")
	if len(lines) != 7 || lines[0] != "<system-reminder>" || lines[6] != "</system-reminder>" {
		t.Fatalf("note of %d lines; want a reminder with a line per job:\n%s", len(lines), note)
	}
	for i, want := range []string{"all green", "re-attached", "unknown: the store holds no event", "unknown: " + ErrNoRemoteStore.Error()} {
		if line := lines[2+i]; !strings.HasPrefix(line, "- "+jobs[i].ID) || !strings.Contains(line, want) {
			t.Errorf("line for %s = %q; want it to say %q", jobs[i].ID, line, want)
		}
	}
	if strings.Contains(lines[2], "re-attached") || strings.Contains(lines[2], "unknown") {
		t.Errorf("an ended job's line speaks of the store: %q", lines[2])
	}
}
