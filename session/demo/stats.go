package demo

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// Stats counts what the team did, for the summary. The zero value is
// ready to use.
type Stats struct {
	mu     sync.Mutex
	counts map[string]int  // guarded by mu; by event kind, and asks, shutdowns, idle-sent
	tools  map[string]int  // guarded by mu; the lead's tool calls by tool
	done   map[string]bool // guarded by mu; tasks reported completed
}

// Add counts one event of the team.
func (s *Stats) Add(e swarm.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts, s.tools, s.done = map[string]int{}, map[string]int{}, map[string]bool{}
	}
	s.counts[e.Kind]++
	switch {
	case e.Kind == swarm.EventPermission && strings.Contains(e.Text, " asks to run "):
		s.counts["asks"]++
	case e.Kind == swarm.EventExit && strings.Contains(e.Text, "has shut down"):
		s.counts["shutdowns"]++
	case e.Kind == swarm.EventIdle && e.Agent != "" && strings.HasPrefix(e.Text, e.Agent+" is idle"):
		s.counts["idle-sent"]++ // as the lead read it
		if _, id, ok := strings.Cut(e.Text, "completed task #"); ok {
			if f := strings.Fields(id); len(f) > 0 {
				s.done[f[0]] = true
			}
		}
	}
	if f := strings.Fields(e.Text); e.Kind == "tool" && e.Agent == team.LeadName && len(f) > 0 { // the lead's: the same in every backend
		s.tools[f[0]]++
	}
}

// Deleted reports whether the lead deleted its team (TeamDelete).
func (s *Stats) Deleted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[swarm.EventDeleted] > 0
}

// Outcome is how a demo run ended, for Summary.
type Outcome struct {
	Elapsed  time.Duration
	Mode     string // where the teammates ran
	Granted  int    // permission requests the lead granted
	Answer   string // the lead's final answer
	Problems []string
}

// Summary prints the demo's figures and its verdict to out; it returns
// an error listing the problems, if any.
func (s *Stats) Summary(out io.Writer, o Outcome) error {
	fmt.Fprintf(out, "\nsummary (%s):\n", o.Elapsed.Round(10*time.Millisecond))
	s.mu.Lock()
	fmt.Fprintf(out, "  teammates spawned      %d (%s)\n", s.counts[swarm.EventSpawned], o.Mode)
	fmt.Fprintf(out, "  tasks completed        %d\n", len(s.done))
	fmt.Fprintf(out, "  lead's tool calls      %s\n", toolCounts(s.tools))
	fmt.Fprintf(out, "  messages to the lead   %d\n", s.counts[swarm.EventMessage])
	fmt.Fprintf(out, "  permission requests    %d (granted by the lead %d)\n", s.counts["asks"], o.Granted)
	fmt.Fprintf(out, "  idle notifications     %d, reaching the lead as %d digest message(s)\n", s.counts["idle-sent"], s.counts[swarm.EventDigest])
	fmt.Fprintf(out, "  shutdowns              %d\n", s.counts["shutdowns"])
	fmt.Fprintf(out, "  deaths                 %d\n", s.counts[swarm.EventDead])
	s.mu.Unlock()
	fmt.Fprintf(out, "  lead's answer          %s\n", o.Answer)
	if len(o.Problems) > 0 {
		for _, p := range o.Problems {
			fmt.Fprintf(out, "  FAILED: %s\n", p)
		}
		return fmt.Errorf("demo failed: %s", strings.Join(o.Problems, "; "))
	}
	fmt.Fprintf(out, "  result                 ok: calc has Sub, its test passes, README lists it, the team is deleted\n")
	return nil
}

func toolCounts(m map[string]int) string {
	if len(m) == 0 {
		return "(in the panes)"
	}
	names := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, m[n])
	}
	return strings.Join(parts, ", ")
}

// Approver answers the teammates' permission requests as the demo's lead:
// it grants every one, and go test for the whole team. The zero value is
// ready to use.
type Approver struct {
	mu      sync.Mutex
	granted int // guarded by mu
}

// Answer grants q; a go test run is allowed for the whole team, since
// tests may run again at any time.
func (a *Approver) Answer(_ context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.granted++
	if strings.Contains(string(q.Input), "go test") {
		return swarm.PermissionAnswer{Allow: true, Always: true, Rule: "Bash(go test:*)"}, nil
	}
	return swarm.PermissionAnswer{Allow: true}, nil
}

// Granted returns how many requests Answer granted.
func (a *Approver) Granted() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.granted
}
