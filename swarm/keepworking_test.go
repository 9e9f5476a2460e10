package swarm

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// BeforeIdle (the TeammateIdle hook) sends a teammate back to work with
// its feedback as the prompt, and at most MaxKeepWorking times in a row.
func TestBeforeIdleKeepsWorking(t *testing.T) {
	tests := []struct {
		name   string
		refuse int // how many times BeforeIdle says keep working
		want   int // runs kept
	}{
		{name: "once", refuse: 1, want: 1},
		{name: "capped", refuse: 1000, want: MaxKeepWorking},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, script(`{"match":{"user":"keep going"},"reply":{"text":"WORKED-AGAIN"},"repeat":true}`,
				`{"reply":{"text":"DONE"},"repeat":true}`), nil)
			var mu sync.Mutex
			asked := 0
			h.mateCfg = func(tc *TeammateConfig) {
				tc.BeforeIdle = func(context.Context) (bool, string) {
					mu.Lock()
					defer mu.Unlock()
					asked++
					return asked <= tt.refuse, "keep going: the checks fail"
				}
			}
			h.create("gate")
			h.spawn("ann", "start")
			h.waitFor("ann idle", func() bool { return h.hasEvent("ann", EventIdle, "") })
			h.mu.Lock()
			kept := 0
			for _, e := range h.events {
				if e.Agent == "ann" && e.Kind == EventHook && strings.Contains(e.Text, "keep going: the checks fail") {
					kept++
				}
			}
			capped := false
			for _, e := range h.events {
				capped = capped || (e.Kind == EventWarning && strings.Contains(e.Text, "going idle anyway"))
			}
			h.mu.Unlock()
			if kept != tt.want {
				t.Errorf("kept working %d times; want %d", kept, tt.want)
			}
			if capped != (tt.refuse > MaxKeepWorking) {
				t.Errorf("cap warning = %v; want %v", capped, tt.refuse > MaxKeepWorking)
			}
		})
	}
}
