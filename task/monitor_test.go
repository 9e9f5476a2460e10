package task

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// chanSource is a LineSource fed by a test: each string sent is a line;
// closing the channel ends the source cleanly.
func chanSource(ch <-chan string) LineSource {
	return func(ctx context.Context, emit func(string) bool) (SourceEnd, error) {
		for {
			select {
			case l, ok := <-ch:
				if !ok {
					return SourceEnd{Note: "the test source ended"}, nil
				}
				if !emit(l) {
					return SourceEnd{}, nil
				}
			case <-ctx.Done():
				return SourceEnd{}, nil
			}
		}
	}
}

// monitorEvents takes the EventMonitor and EventTerminated events queued
// on sub.
func monitorEvents(sub *Subscription) (mons []Event, ended []Event) {
	for _, e := range drain(sub) {
		switch e.Kind {
		case EventMonitor:
			mons = append(mons, e)
		case EventTerminated:
			ended = append(ended, e)
		}
	}
	return mons, ended
}

// TestMonitorBatching: many matching lines within one window make one
// event, with the first lines and the count of the rest; non-matching
// lines wake nobody but are kept in the output file; the next window's
// lines make the next event; the source's end ends the monitor, completed,
// with what was not yet told. On a fake clock (synctest).
func TestMonitorBatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{Dir: t.TempDir(), PollInterval: -1})
		defer r.Close(context.Background())
		sub := r.Subscribe()
		ch := make(chan string)
		st, err := r.StartMonitor(MonitorSpec{Description: "errors", Filter: regexp.MustCompile(`ERROR`),
			Batch: time.Second, Lines: chanSource(ch), Detail: Monitor{Source: "test"}})
		if err != nil {
			t.Fatal(err)
		}
		if st.ID.TypeOf() != MonitorMCP || st.Status != Running {
			t.Fatalf("started %+v", st)
		}
		for i := range 100 {
			ch <- fmt.Sprintf("ERROR %d", i)
			ch <- fmt.Sprintf("info %d", i)
		}
		synctest.Wait()
		if mons, _ := monitorEvents(sub); len(mons) != 0 {
			t.Fatalf("%d events before the window ended, want 0", len(mons))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		mons, _ := monitorEvents(sub)
		if len(mons) != 1 {
			t.Fatalf("%d events for one window, want 1", len(mons))
		}
		n := mons[0].Notification
		for _, want := range []string{"<task-id>" + string(st.ID), "ERROR 0\nERROR 1\n", "+80 more matching lines", "100 new matching lines"} {
			if !strings.Contains(n, want) {
				t.Errorf("notification lacks %q:\n%s", want, n)
			}
		}
		if strings.Contains(n, "info") || strings.Contains(n, "<status>") {
			t.Errorf("notification has a non-matching line or a status:\n%s", n)
		}
		// A quiet window: no event.
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if mons, _ := monitorEvents(sub); len(mons) != 0 {
			t.Fatalf("%d events in quiet windows", len(mons))
		}
		ch <- "ERROR late"
		close(ch)
		synctest.Wait()
		_, ended := monitorEvents(sub)
		if len(ended) != 1 || ended[0].State.Status != Completed || !strings.Contains(ended[0].Notification, "ERROR late") {
			t.Fatalf("end events %+v", ended)
		}
		m := ended[0].State.Detail.(*Monitor)
		if m.Seen != 201 || m.Matched != 101 || m.Wakes != 1 {
			t.Errorf("counters seen %d matched %d wakes %d, want 201 101 1", m.Seen, m.Matched, m.Wakes)
		}
		data, _ := os.ReadFile(st.OutputFile)
		if got := strings.Count(string(data), "\n"); got != 201 {
			t.Errorf("output file has %d lines, want all 201 seen", got)
		}
	})
}

// TestMonitorStop: Stop ends a monitor silently and stops its source.
func TestMonitorStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{Dir: t.TempDir(), PollInterval: -1})
		defer r.Close(context.Background())
		ch := make(chan string)
		stopped := make(chan struct{})
		st, err := r.StartMonitor(MonitorSpec{Description: "d", Lines: chanSource(ch), Stop: func() { close(stopped) }})
		if err != nil {
			t.Fatal(err)
		}
		sub := r.Subscribe()
		got, err := r.Stop(context.Background(), st.ID)
		if err != nil || got.Status != Killed {
			t.Fatalf("Stop = %v, %v", got.Status, err)
		}
		<-stopped
		_, ended := monitorEvents(sub)
		if len(ended) != 1 || ended[0].Notification != "" {
			t.Fatalf("a stopped monitor told the model: %+v", ended)
		}
	})
}

// TestMonitorCommand: a command monitor runs a real shell; its matching
// line wakes the agent within a window, and the command's failure ends
// the monitor failed, its shell quiet.
func TestMonitorCommand(t *testing.T) {
	r := shellRegistry(t, Config{})
	sub := r.Subscribe()
	lines, shell, stop, err := r.CommandSource(ShellSpec{Command: "echo starting; echo 'build FAILED: x.go'; sleep 0.5; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.StartMonitor(MonitorSpec{Description: "build", Filter: regexp.MustCompile(`FAILED`), Batch: 100 * time.Millisecond,
		Lines: lines, Stop: stop, Detail: Monitor{Source: "command", Shell: shell}})
	if err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, sub, EventMonitor)
	if e.State.ID != st.ID || !strings.Contains(e.Notification, "build FAILED: x.go") || strings.Contains(e.Notification, "starting") {
		t.Fatalf("monitor event %+v", e)
	}
	for {
		e = nextEvent(t, sub, EventTerminated)
		if e.State.ID == shell {
			if e.Notification != "" {
				t.Errorf("the monitor's shell told the model itself: %s", e.Notification)
			}
			continue
		}
		break
	}
	if e.State.ID != st.ID || e.State.Status != Failed || !strings.Contains(e.Notification, "exited with code 3") {
		t.Fatalf("end %+v\n%s", e.State, e.Notification)
	}
}

// TestMonitorCommandStop: stopping a command monitor kills its shell.
func TestMonitorCommandStop(t *testing.T) {
	r := shellRegistry(t, Config{})
	lines, shell, stop, err := r.CommandSource(ShellSpec{Command: "sleep 30"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.StartMonitor(MonitorSpec{Description: "sleep", Lines: lines, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Stop(t.Context(), st.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the shell to end", func() bool { s, _ := r.Get(shell); return s.Status.Terminal() })
}

// TestMonitorFile: a file monitor sees lines appended after it started (not
// those before), a truncation (it reads again from the start) and a
// rotation (the old file's last lines, then the new file's).
func TestMonitorFile(t *testing.T) {
	r := shellRegistry(t, Config{})
	dir := t.TempDir()
	log := filepath.Join(dir, "app.log")
	if err := os.WriteFile(log, []byte("ERROR old, before the monitor\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := r.Subscribe()
	st, err := r.StartMonitor(MonitorSpec{Description: "log", Filter: regexp.MustCompile(`ERROR`), Batch: 100 * time.Millisecond,
		Lines: FollowFile(log, nil)})
	if err != nil {
		t.Fatal(err)
	}
	appendTo := func(path, text string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(text)
		f.Close()
	}
	want := func(line string) {
		t.Helper()
		e := nextEvent(t, sub, EventMonitor)
		if e.State.ID != st.ID || !strings.Contains(e.Notification, line) || strings.Contains(e.Notification, "old, before") {
			t.Fatalf("want %q, got %s", line, e.Notification)
		}
	}
	appendTo(log, "info fine\nERROR one\n")
	want("ERROR one")
	if err := os.Truncate(log, 0); err != nil {
		t.Fatal(err)
	}
	// Shorter than what was there: seen as a truncation however late
	// the next look comes.
	appendTo(log, "ERROR tr\n")
	want("ERROR tr")
	if err := os.Rename(log, log+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(log+".1", "ERROR last of the old\n")
	appendTo(log, "ERROR first of the new\n")
	seen := map[string]bool{}
	for !seen["ERROR last of the old"] || !seen["ERROR first of the new"] {
		e := nextEvent(t, sub, EventMonitor)
		for _, l := range []string{"ERROR last of the old", "ERROR first of the new"} {
			if strings.Contains(e.Notification, l) {
				seen[l] = true
			}
		}
	}
	if _, err := r.Stop(t.Context(), st.ID); err != nil {
		t.Fatal(err)
	}
}

// TestSplitter: lines are cut at newlines, carriage returns dropped, a
// line without end held until it ends, and a huge one handed over in
// bounded pieces.
func TestSplitter(t *testing.T) {
	var got []string
	emit := func(l string) bool { got = append(got, l); return true }
	var sp splitter
	sp.feed([]byte("a\r\nb"), emit)
	sp.feed([]byte("c\n"), emit)
	sp.feed([]byte(strings.Repeat("x", monitorSplitMax+5)), emit)
	sp.flush(emit)
	if len(got) != 4 || got[0] != "a" || got[1] != "bc" || len(got[2]) != monitorSplitMax || got[3] != "xxxxx" {
		t.Fatalf("lines %q", got)
	}
}

// FuzzSplitter: whatever the bytes and however they are cut into reads,
// the splitter's lines joined with newlines give back the input (less the
// carriage return before each newline), and no line is longer than
// monitorSplitMax.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), uint8(1))
	f.Add([]byte("\n\n\r\n"), uint8(2))
	f.Add([]byte(strings.Repeat("x", monitorSplitMax+3)+"\ny"), uint8(7))
	f.Add([]byte("é\xff\x00\n"), uint8(3))
	f.Add([]byte(strings.Repeat("x", 2*monitorSplitMax+100)+"\ny"), uint8(12)) // a held part and the next read's line end
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		step := int(cut)%16 + 1
		var got []string
		long := false
		emit := func(l string) bool {
			got = append(got, l)
			long = long || len(l) > monitorSplitMax
			return true
		}
		var sp splitter
		for i := 0; i < len(data); i += step {
			sp.feed(data[i:min(i+step, len(data))], emit)
		}
		sp.flush(emit)
		if long {
			t.Fatalf("a line longer than %d", monitorSplitMax)
		}
		// A line cut at monitorSplitMax was no line end: join without one.
		var b strings.Builder
		for i, l := range got {
			b.WriteString(l)
			if i < len(got)-1 && len(l) != monitorSplitMax {
				b.WriteByte('\n')
			}
		}
		want := strings.ReplaceAll(string(data), "\r\n", "\n")
		want = strings.TrimSuffix(want, "\n")
		if len(data) < monitorSplitMax && b.String() != want { // longer: a cut and a line end look alike
			t.Fatalf("lines %q do not give back %q", got, data)
		}
	})
}
