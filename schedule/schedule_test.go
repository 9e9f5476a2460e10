package schedule

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		expr string
		want string // "" = valid
	}{
		{"*/5 * * * *", ""},
		{"0 9 * * 1-5", ""},
		{"30 14 28 2 *", ""},
		{"* * * *", "want 5 fields"},
		{"0 * * * * *", "got 6"},
		{"", "got 0"},
		{"@every 5m x y z", "descriptors"},
		{"61 * * * *", "61"},
		{"* 24 * * *", "24"},
		{"* * * 13 *", "13"},
		{"a * * * *", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := Parse(tt.expr)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Parse(%q) = %v; want no error", tt.expr, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Parse(%q) = %v; want an error saying %q", tt.expr, err, tt.want)
			case err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", strings.TrimSpace(tt.expr))):
				t.Fatalf("Parse(%q) = %v; want the error to name the expression", tt.expr, err)
			}
		})
	}
}

func TestInterval(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"5m", "*/5 * * * *", ""},
		{"1m", "* * * * *", ""},
		{"30s", "* * * * *", ""},
		{"90s", "*/2 * * * *", ""},
		{"60m", "0 * * * *", ""},
		{"2h", "0 */2 * * *", ""},
		{"120m", "0 */2 * * *", ""},
		{"1d", "0 0 * * *", ""},
		{"48h", "0 0 */2 * *", ""},
		{"7m", "", "6m or 10m"},
		{"90m", "", "1h or 2h"},
		{"5h", "", "4h or 6h"},
		{"m", "", "want a number"},
		{"5x", "", "want s, m, h or d"},
		{"-5m", "", "positive"},
		{"05m", "", "positive"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Interval(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Interval(%q) = %q, %v; want an error saying %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Interval(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			if _, err := Parse(got); err != nil {
				t.Fatalf("Interval(%q) = %q, which does not parse: %v", tt.in, got, err)
			}
		})
	}
}

// firings collects what a schedule fires.
type firings struct {
	mu sync.Mutex
	fs []Firing
}

func (f *firings) fire(x Firing) { f.mu.Lock(); f.fs = append(f.fs, x); f.mu.Unlock() }
func (f *firings) get() []Firing {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Firing(nil), f.fs...)
}

// TestCronFiresTwice runs a recurring job on synctest's virtual clock:
// it fires at its first two times, and not before.
func TestCronFiresTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got firings
		var saves []State
		var saveMu sync.Mutex
		s, err := New(Config{Fire: got.fire, Save: func(st State) { saveMu.Lock(); saves = append(saves, st); saveMu.Unlock() }}, State{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		j, err := s.Create("*/10 * * * *", "check CI", true)
		if err != nil {
			t.Fatal(err)
		}
		first := j.next()
		if d := first.Sub(time.Now()); d <= 0 || d > 10*time.Minute {
			t.Fatalf("next firing in %s; want within 10 minutes", d)
		}
		time.Sleep(first.Sub(time.Now()) - time.Second)
		synctest.Wait()
		if n := len(got.get()); n != 0 {
			t.Fatalf("%d firings a second before the first time; want 0", n)
		}
		time.Sleep(time.Second + 10*time.Minute)
		synctest.Wait()
		fs := got.get()
		if len(fs) != 2 {
			t.Fatalf("%d firings after two times; want 2: %+v", len(fs), fs)
		}
		for i, f := range fs {
			if f.Kind != KindCron || f.JobID != j.ID || f.Prompt != "check CI" || f.Final {
				t.Errorf("firing %d = %+v; want job %s's prompt, not final", i, f, j.ID)
			}
		}
		if !fs[1].At.Equal(first.Add(10 * time.Minute)) {
			t.Errorf("second firing due %s; want %s", fs[1].At, first.Add(10*time.Minute))
		}
		if !strings.Contains(fs[0].Text(), `<scheduled-task id="`+j.ID+`"`) || !strings.Contains(fs[0].Text(), "NOT TYPED BY THE USER") {
			t.Errorf("Text() = %q; want the scheduled-task wrapper", fs[0].Text())
		}
		saveMu.Lock()
		last := saves[len(saves)-1]
		saveMu.Unlock()
		if len(last.Jobs) != 1 || !last.Jobs[0].Last.Equal(time.Now()) {
			t.Errorf("last saved state %+v; want the job, last fired now", last)
		}
	})
}

// TestOneShotAndWakeup fires a one-shot job and a wakeup once each, and
// then nothing is pending.
func TestOneShotAndWakeup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got firings
		s, _ := New(Config{Fire: got.fire}, State{})
		s.Start(t.Context())
		defer s.Close()
		if _, err := s.Create("* * * * *", "once", false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Wake(90*time.Second, "CI takes a while", "look at CI"); err != nil {
			t.Fatal(err)
		}
		if !s.Pending() {
			t.Fatal("Pending() = false with a job and a wakeup")
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		fs := got.get()
		if len(fs) != 2 || fs[0].Kind != KindCron || !fs[0].Final || fs[1].Kind != KindWakeup || fs[1].Reason != "CI takes a while" {
			t.Fatalf("firings %+v; want the one-shot job (final), then the wakeup", fs)
		}
		if s.Pending() || len(s.List()) != 0 {
			t.Fatalf("Pending() = %v, List() = %v after both fired; want nothing left", s.Pending(), s.List())
		}
	})
}

// TestMaxFirings stops after MaxFirings (troupe -p --max-wakeups).
func TestMaxFirings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got firings
		s, _ := New(Config{Fire: got.fire, MaxFirings: 2}, State{})
		s.Start(t.Context())
		defer s.Close()
		s.Create("* * * * *", "tick", true)
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := len(got.get()); n != 2 {
			t.Fatalf("%d firings with MaxFirings 2 over 10 minutes; want 2", n)
		}
		if s.Pending() {
			t.Fatal("Pending() = true after MaxFirings; want false")
		}
		if len(s.List()) != 1 {
			t.Fatalf("List() = %v; want the job kept", s.List())
		}
	})
}

func TestJobCap(t *testing.T) {
	s, _ := New(Config{Fire: func(Firing) {}}, State{})
	for i := range MaxJobs {
		if _, err := s.Create("0 * * * *", fmt.Sprint("job ", i), true); err != nil {
			t.Fatalf("Create #%d = %v; want it to succeed", i+1, err)
		}
	}
	_, err := s.Create("0 * * * *", "one too many", true)
	if !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), "50") {
		t.Fatalf("Create #51 = %v; want ErrTooMany naming 50", err)
	}
	if _, err := s.Delete(s.List()[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create("0 * * * *", "room again", true); err != nil {
		t.Fatalf("Create after a Delete = %v; want room", err)
	}
	if _, err := s.Delete("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete(nope) = %v; want ErrNotFound", err)
	}
}

func TestCreateRefuses(t *testing.T) {
	s, _ := New(Config{Fire: func(Firing) {}}, State{})
	for _, tt := range []struct{ expr, prompt, want string }{
		{"0 0 30 2 *", "never", "never matches"},
		{"* * *", "x", "5 fields"},
		{"* * * * *", "  ", "prompt is empty"},
	} {
		if _, err := s.Create(tt.expr, tt.prompt, true); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Create(%q, %q) = %v; want an error saying %q", tt.expr, tt.prompt, err, tt.want)
		}
	}
}

func TestWakeupBounds(t *testing.T) {
	tests := []struct {
		delay time.Duration
		ok    bool
	}{
		{59 * time.Second, false},
		{60 * time.Second, true},
		{3600 * time.Second, true},
		{3601 * time.Second, false},
		{0, false},
		{-time.Minute, false},
	}
	s, _ := New(Config{Fire: func(Firing) {}}, State{})
	for _, tt := range tests {
		_, err := s.Wake(tt.delay, "r", "p")
		if tt.ok != (err == nil) {
			t.Errorf("Wake(%s) = %v; want ok %v", tt.delay, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "60 to 3600 seconds") {
			t.Errorf("Wake(%s) = %v; want the error to name 60 to 3600 seconds", tt.delay, err)
		}
	}
	if _, ok := s.CancelWakeup(); !ok {
		t.Fatal("CancelWakeup() = false with a wakeup pending")
	}
	if _, ok := s.CancelWakeup(); ok {
		t.Fatal("CancelWakeup() = true twice")
	}
	low, _ := New(Config{Fire: func(Firing) {}, MinDelay: time.Second}, State{})
	if _, err := low.Wake(2*time.Second, "", "p"); err != nil {
		t.Fatalf("Wake(2s) with MinDelay 1s = %v; want ok", err)
	}
}

// TestDueAfterDowntime: a job whose times passed while the session was
// down fires once, not once a missed time; a past one-shot and wakeup
// fire once and go.
func TestDueAfterDowntime(t *testing.T) {
	created := time.Date(2026, 12, 7, 10, 0, 30, 0, time.Local)
	st := State{
		Jobs: []Job{
			{ID: "rec", Cron: "*/10 * * * *", Prompt: "p", Recurring: true, Created: created},
			{ID: "one", Cron: "30 10 * * *", Prompt: "o", Created: created},
			{ID: "later", Cron: "0 23 * * *", Prompt: "l", Recurring: true, Created: created},
		},
		Wakeup: &Wakeup{At: created.Add(5 * time.Minute), Prompt: "w", Set: created},
	}
	now := created.Add(2 * time.Hour)
	fs, after := Due(st, now)
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.Kind+":"+f.JobID)
	}
	if got, want := strings.Join(ids, " "), "cron:rec cron:one wakeup:"; got != want {
		t.Fatalf("Due fired %q; want %q", got, want)
	}
	if len(after.Jobs) != 2 || after.Jobs[0].ID != "rec" || !after.Jobs[0].Last.Equal(now) || after.Wakeup != nil {
		t.Fatalf("state after Due = %+v; want rec (last now) and later, no wakeup", after)
	}
	if fs2, _ := Due(after, now); len(fs2) != 0 {
		t.Fatalf("Due again at the same time fired %+v; want nothing", fs2)
	}
	if n := Next(after); !n.Equal(time.Date(2026, 12, 7, 12, 10, 0, 0, time.Local)) {
		t.Fatalf("Next = %s; want 12:10", n)
	}
	if len(st.Jobs) != 3 || st.Wakeup == nil {
		t.Fatal("Due changed its input")
	}
	// A recurring job a week old fires a last time and goes.
	old := State{Jobs: []Job{{ID: "old", Cron: "* * * * *", Prompt: "p", Recurring: true, Created: now.Add(-MaxAge)}}}
	fs, after = Due(old, now)
	if len(fs) != 1 || !fs[0].Final || len(after.Jobs) != 0 {
		t.Fatalf("a job MaxAge old: firings %+v, state %+v; want one final firing and no job", fs, after)
	}
}

// TestRestoreFiresOnce starts a schedule from a state whose job missed
// many times: it fires once at Start, then on its times.
func TestRestoreFiresOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got firings
		now := time.Now()
		st := State{Jobs: []Job{{ID: "j1", Cron: "* * * * *", Prompt: "p", Recurring: true, Created: now.Add(-time.Hour)}}}
		s, _ := New(Config{Fire: got.fire}, st)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		s.Start(ctx)
		defer s.Close()
		synctest.Wait()
		if n := len(got.get()); n != 1 {
			t.Fatalf("%d firings at the start after an hour down; want 1", n)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(got.get()); n != 2 {
			t.Fatalf("%d firings a minute later; want 2", n)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 9 * * 1-5", "* * * *", "61 * * * *", "@hourly", "1,2-5/2 */3 1 JAN MON"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := Parse(expr)
		if err == nil && s == nil {
			t.Fatalf("Parse(%q) = nil, nil", expr)
		}
		if err == nil {
			next(expr, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) // must not panic
		}
	})
}

// TestMaxFiringsKeepsUnfired: firings dropped at MaxFirings leave their
// jobs as they were, so the record keeps them.
func TestMaxFiringsKeepsUnfired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got firings
		var last State
		var mu sync.Mutex
		now := time.Now()
		st := State{Jobs: []Job{
			{ID: "a", Cron: "* * * * *", Prompt: "a", Created: now.Add(-time.Hour)},
			{ID: "b", Cron: "* * * * *", Prompt: "b", Created: now.Add(-time.Hour)},
		}}
		s, _ := New(Config{Fire: got.fire, MaxFirings: 1, Save: func(st State) { mu.Lock(); last = st; mu.Unlock() }}, st)
		s.Start(t.Context())
		synctest.Wait()
		s.Close()
		if fs := got.get(); len(fs) != 1 || fs[0].JobID != "a" {
			t.Fatalf("fired %+v; want job a only", fs)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(last.Jobs) != 1 || last.Jobs[0].ID != "b" || !last.Jobs[0].Last.IsZero() {
			t.Fatalf("saved %+v; want one-shot a gone and b kept unfired", last)
		}
	})
}
