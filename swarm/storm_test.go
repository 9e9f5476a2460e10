package swarm

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// R13 (docs/benchmarks.md, "The peer's scenarios"): a spawn storm of 100 agents with a
// retry storm on top (every spawn sent three times at once). Spawning is
// idempotent by agent id: 100 teammates, one member each; and the memory
// an idle teammate holds is bounded.
func TestR13SpawnStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 100 teammates")
	}
	const agents, retries = 100, 3
	h := newHarness(t, script(`{"match":{},"reply":{"text":"ok"},"repeat":true}`), func(c *LeadConfig) { c.MaxTeammates = agents })
	cfg := h.create("storm100")
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	var mu sync.Mutex
	started := map[string]int{}
	for i := range agents * retries {
		wg.Go(func() {
			name := fmt.Sprintf("a%03d", i%agents)
			info, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: name, Prompt: "work"})
			if err != nil {
				// A spawn that races one of the same name still in progress.
				return
			}
			mu.Lock()
			if !info.Existing {
				started[name]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	for i := range agents {
		name := fmt.Sprintf("a%03d", i)
		if started[name] != 1 {
			t.Errorf("%s started %d times, want once", name, started[name])
		}
	}
	h.waitFor("all idle", func() bool {
		c, err := h.store.Teams().Get(context.Background(), cfg.Name)
		if err != nil || len(c.Members) != agents+1 {
			return false
		}
		for _, m := range c.Members {
			if !m.IsLead() && m.Active() {
				return false
			}
		}
		return true
	})
	c, _ := h.store.Teams().Get(context.Background(), cfg.Name)
	if n := len(c.Members); n != agents+1 {
		t.Fatalf("team has %d members, want %d", n, agents+1)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc+after.StackInuse) - int64(before.HeapAlloc+before.StackInuse)) / agents
	t.Logf("heap and stacks per idle teammate: %d KiB (%d teammates, %d goroutines)", per/1024, agents, runtime.NumGoroutine())
	const bound = 512 << 10
	if per > bound {
		t.Errorf("an idle teammate holds %d KiB of heap, more than the %d KiB bound", per/1024, bound/1024)
	}
	if n := h.lead.Running(); n != agents {
		t.Errorf("Running = %d, want %d", n, agents)
	}
}

// BenchmarkSpawnInProcess measures one in-process spawn: the member added
// to the team file, the goroutine started, the pane recorded (memory
// store; the teammate's first turn runs concurrently and is not counted).
func BenchmarkSpawnInProcess(b *testing.B) {
	h := newHarness(b, script(`{"match":{},"reply":{"text":"ok"},"repeat":true}`), func(c *LeadConfig) { c.MaxTeammates = b.N + 1 })
	h.quiet = true
	h.create("bench")
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: fmt.Sprintf("b%06d", i), Prompt: "work"}); err != nil {
			b.Fatal(err)
		}
	}
}
