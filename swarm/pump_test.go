package swarm

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// TestIdleTeammatesHoldOneGoroutine: on the file store (whose watches hold
// no goroutine) an idle teammate holds one goroutine, its run, before and
// after it was woken by mail; the inbox pump runs on a goroutine of its
// own only while the teammate works or reads its inbox.
func TestIdleTeammatesHoldOneGoroutine(t *testing.T) {
	const n = 20
	st, err := file.Open(t.TempDir(), file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := team.Create(ctx, st.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	script, err := scripted.Parse([]byte(`{"turns":[{"match":{},"reply":{"text":"ok"},"repeat":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	model := &askedModel{Model: scripted.New(script), asked: make(chan string, 2*n)}
	// A watch first, so that the store's own watcher goroutines are
	// counted in the base.
	if _, err := st.Mail().Watch(ctx, "crew", team.LeadName); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	idle := make(chan string, 2*n)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range n {
		name := fmt.Sprintf("t%02d", i)
		if _, err := team.AddMember(ctx, st.Teams(), "crew", team.Member{Name: name}, time.Now()); err != nil {
			t.Fatal(err)
		}
		tm, err := NewTeammate(TeammateConfig{Team: "crew", Name: name, Teams: st.Teams(), Mail: st.Mail(), Tasks: st.Tasks(), Prompt: "start",
			OnEvent: func(e Event) {
				if e.Kind == EventIdle {
					idle <- e.Agent
				}
			},
			Build: func(*Teammate) (agent.Config, error) {
				reg, err := tool.NewRegistry()
				return agent.Config{Model: model, System: "teammate", Tools: reg}, err
			}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { tm.Run(ctx) })
	}
	settled := func(what string) {
		t.Helper()
		for range n {
			waitSignal(t, idle, what)
		}
		waitUntil(t, fmt.Sprintf("at most one goroutine per idle teammate (%s)", what), func() bool {
			return runtime.NumGoroutine()-base <= n
		})
	}
	settled("idle after the first turn")
	for range n {
		waitSignal(t, model.asked, "the first prompt")
	}
	for i := range n {
		if _, err := st.Mail().Send(ctx, "crew", fmt.Sprintf("t%02d", i), mailbox.Message{From: team.LeadName, Text: "wake up"}); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		waitSignal(t, model.asked, "a teammate asked with the message")
	}
	settled("idle after the message's turn")
}

// countedTasks counts the task-list watches alive (made, and their ctx not
// yet done).
type countedTasks struct {
	tasklist.Store
	w    tasklist.Watcher
	live atomic.Int64
}

func (c *countedTasks) Watch(ctx context.Context, list string) (<-chan struct{}, error) {
	ch, err := c.w.Watch(ctx, list)
	if err == nil {
		c.live.Add(1)
		context.AfterFunc(ctx, func() { c.live.Add(-1) })
	}
	return ch, err
}

// TestTeammateWatchesTaskListOnce: a teammate that claims tasks while it
// waits holds one task-list watch however many times it went idle (each
// wait made one that lived on with the run).
func TestTeammateWatchesTaskListOnce(t *testing.T) {
	st, err := file.Open(t.TempDir(), file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := team.Create(ctx, st.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(ctx, st.Teams(), "crew", team.Member{Name: "ann"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	script, err := scripted.Parse([]byte(`{"turns":[{"match":{},"reply":{"text":"ok"},"repeat":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tasks := &countedTasks{Store: st.Tasks(), w: st.Tasks()}
	idle := make(chan struct{}, 16)
	tm, err := NewTeammate(TeammateConfig{Team: "crew", Name: "ann", Teams: st.Teams(), Mail: st.Mail(), Tasks: tasks, Prompt: "start",
		OnEvent: func(e Event) {
			if e.Kind == EventIdle {
				idle <- struct{}{}
			}
		},
		Build: func(*Teammate) (agent.Config, error) {
			reg, err := tool.NewRegistry()
			return agent.Config{Model: scripted.New(script), System: "teammate", Tools: reg}, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { tm.Run(ctx) })
	waitSignal(t, idle, "idle after the first turn")
	for i := range 5 {
		if _, err := st.Mail().Send(ctx, "crew", "ann", mailbox.Message{From: team.LeadName, Text: fmt.Sprintf("turn %d", i)}); err != nil {
			t.Fatal(err)
		}
		waitSignal(t, idle, "idle after a message's turn")
	}
	waitUntil(t, "one task-list watch", func() bool { return tasks.live.Load() == 1 })
	time.Sleep(20 * time.Millisecond)
	if n := tasks.live.Load(); n != 1 {
		t.Errorf("%d task-list watches alive after 6 turns; want 1", n)
	}
}
