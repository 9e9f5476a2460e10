package record

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/schedule"
)

// TestScheduleAcrossReopen: the schedule a session recorded comes back
// from its record, the last line winning, and a restored schedule fires
// a job whose times passed meanwhile once.
func TestScheduleAcrossReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	var stderr bytes.Buffer
	l, err := Create(dir, Line{SessionID: "s1", Cwd: "/w"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 12, 7, 10, 0, 30, 0, time.UTC)
	job := schedule.Job{ID: "a1", Cron: "*/10 * * * *", Prompt: "check CI", Recurring: true, Created: created}
	l.Schedule(schedule.State{Jobs: []schedule.Job{job, {ID: "b2", Cron: "0 9 * * *", Prompt: "gone", Created: created}}})
	l.Schedule(schedule.State{Jobs: []schedule.Job{job}, Wakeup: &schedule.Wakeup{At: created.Add(time.Minute), Reason: "r", Prompt: "w", Set: created}})
	l.Close()
	prev, err := Load(Path(dir, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	st := prev.Schedule
	if st == nil || len(st.Jobs) != 1 || st.Jobs[0].ID != "a1" || !st.Jobs[0].Created.Equal(created) || st.Wakeup == nil || st.Wakeup.Prompt != "w" {
		t.Fatalf("Load's schedule = %+v; want the last recorded (job a1, wakeup w)", st)
	}
	// Appending keeps it; a later line replaces it.
	l, err = Append(Path(dir, "s1"), prev, nil, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if again, _ := Load(Path(dir, "s1")); again.Schedule == nil || len(again.Schedule.Jobs) != 1 {
		t.Fatalf("after Append the schedule is %+v; want it kept", again.Schedule)
	}
	// Every recorded time has passed (they are in 2026-12-07): the
	// restored schedule fires the job once, and the wakeup.
	fired := make(chan schedule.Firing, 10)
	s, err := schedule.New(schedule.Config{Fire: func(f schedule.Firing) { fired <- f }}, *st)
	if err != nil {
		t.Fatal(err)
	}
	s.Start(t.Context())
	var got []schedule.Firing
	for len(got) < 2 {
		select {
		case f := <-fired:
			got = append(got, f)
		case <-time.After(10 * time.Second):
			t.Fatalf("a restored schedule fired %+v in 10 s; want job a1 and the wakeup", got)
		}
	}
	s.Close()
	if got[0].JobID != "a1" || got[1].Kind != schedule.KindWakeup || len(fired) != 0 {
		t.Fatalf("a restored schedule fired %+v then %d more; want job a1 once and the wakeup", got, len(fired))
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestScheduleLineRefused(t *testing.T) {
	hdr := `{"type":"session","version":1,"session_id":"s1","cwd":"/w"}` + "\n"
	for _, tt := range []struct{ line, want string }{
		{`{"type":"schedule"}`, "without its schedule"},
		{`{"type":"schedule","schedule":{"jobs":[{"id":"a","cron":"61 * * * *","prompt":"p"}]}}`, "job 1"},
		{`{"type":"schedule","schedule":{"jobs":[{"id":"a","cron":"* * * * *"},{"id":"a","cron":"* * * * *"}]}}`, "repeated"},
	} {
		_, err := Parse(strings.NewReader(hdr+tt.line+"\n"), "f")
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("Parse(%s) = %v; want an error at line 2 saying %q", tt.line, err, tt.want)
		}
	}
}
