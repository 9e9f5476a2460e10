package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/tasklist"
)

func TestWriters(t *testing.T) {
	tests := []struct {
		name string
		cfg  WritersConfig
	}{
		{"empty inbox", WritersConfig{Writers: 2, Msgs: 10}},
		{"preloaded", WritersConfig{Writers: 2, Msgs: 5, Preload: 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRunner(t)
			res, err := r.Writers(t.Context(), tt.cfg)
			if err != nil {
				t.Fatalf("Writers(%+v) = %v", tt.cfg, err)
			}
			n := tt.cfg.Writers * tt.cfg.Msgs
			if res.Attempted != n || res.OK != n || res.Failed != 0 {
				t.Errorf("Writers: %d ok, %d failed of %d attempted; want all %d ok (first error %q)", res.OK, res.Failed, res.Attempted, n, res.FirstError)
			}
			if res.InvalidInbox != "" || !res.Verify.Clean() {
				t.Errorf("Writers: inbox check %+v, invalid %q; want clean", res.Verify, res.InvalidInbox)
			}
			if res.Verify.Entries != n+tt.cfg.Preload || res.Verify.Stored != n+tt.cfg.Preload {
				t.Errorf("Writers: inbox has %d entries, %d stored; want %d", res.Verify.Entries, res.Verify.Stored, n+tt.cfg.Preload)
			}
			if res.Latency.N != n || res.Latency.P50 <= 0 || res.OKPerS <= 0 || res.WallS <= 0 {
				t.Errorf("Writers: latency %+v, %.1f msg/s over %.3f s; want %d positive samples", res.Latency, res.OKPerS, res.WallS, n)
			}
			if res.WriterCPUMS <= 0 {
				t.Errorf("Writers: writer CPU %v ms; want > 0", res.WriterCPUMS)
			}
		})
	}
}

func TestDelivery(t *testing.T) {
	r := testRunner(t)
	cfg := DeliveryConfig{N: 6, Preload: 5, GapMin: 5 * time.Millisecond, GapMax: 30 * time.Millisecond, Settle: 5 * time.Second}
	res, err := r.Delivery(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Delivery = %v", err)
	}
	if res.Sent != cfg.N || res.Failed != 0 || res.Missing != 0 {
		t.Errorf("Delivery: sent %d, failed %d, missing %d; want %d, 0, 0 (first error %q)", res.Sent, res.Failed, res.Missing, cfg.N, res.FirstError)
	}
	if res.Latency.N != cfg.N || res.Latency.Max > 5000 {
		t.Errorf("Delivery latency %+v; want %d samples under 5 s", res.Latency, cfg.N)
	}
	if res.Reads < 2 || res.Kicks < 1 || res.ReaderCPUMS <= 0 {
		t.Errorf("Delivery: %d reads, %d kicks, reader CPU %v ms; want a watcher that worked", res.Reads, res.Kicks, res.ReaderCPUMS)
	}
}

func TestRace(t *testing.T) {
	r := testRunner(t)
	cfg := RaceConfig{Agents: 3, Rounds: 3}
	res, err := r.Race(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Race = %v", err)
	}
	if res.Violations != 0 || res.Outcomes[outWon] != cfg.Rounds {
		t.Errorf("Race: %d violations, outcomes %v (%v); want one winner per round", res.Violations, res.Outcomes, res.Examples)
	}
	if res.Outcomes[outClaimed] != cfg.Rounds*(cfg.Agents-1) {
		t.Errorf("Race outcomes %v; want every loser told the task is claimed (first error %q)", res.Outcomes, res.FirstError)
	}
	if res.Latency.N != cfg.Agents*cfg.Rounds {
		t.Errorf("Race latency has %d samples; want %d", res.Latency.N, cfg.Agents*cfg.Rounds)
	}
}

func TestDrain(t *testing.T) {
	r := testRunner(t)
	cfg := DrainConfig{Agents: 3, Tasks: 12}
	res, err := r.Drain(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Drain = %v", err)
	}
	if res.Claims != cfg.Tasks || res.DoubleClaims != 0 || res.Completed != cfg.Tasks || len(res.Errors) != 0 {
		t.Errorf("Drain: %d claims, %d double, %d completed, errors %v (%v); want %d each claimed once and completed",
			res.Claims, res.DoubleClaims, res.Completed, res.Errors, res.Examples, cfg.Tasks)
	}
	if res.TasksPerS <= 0 || res.Latency.N != cfg.Tasks {
		t.Errorf("Drain: %.1f tasks/s, latency %+v; want a rate and %d samples", res.TasksPerS, res.Latency, cfg.Tasks)
	}
	// The winning write is a part of its claim.
	if res.Write.N != cfg.Tasks || res.Write.Min <= 0 || res.Write.Max > res.Latency.Max {
		t.Errorf("Drain: winning writes %+v, claims %+v; want %d positive samples, none longer than the longest claim", res.Write, res.Latency, cfg.Tasks)
	}
}

func TestCheckDrainCatchesProblems(t *testing.T) {
	final := []tasklist.Task{
		{ID: "1", Status: tasklist.StatusCompleted, Owner: "agent-0"},
		{ID: "2", Status: tasklist.StatusCompleted, Owner: "agent-1"},
		{ID: "3", Status: tasklist.StatusInProgress, Owner: "agent-2"},
		{ID: "4", Status: tasklist.StatusPending},
	}
	claimed := map[string][]string{"1": {"agent-0"}, "2": {"agent-0", "agent-1"}, "3": {"agent-2"}}
	doubles, completed, examples := checkDrain(claimed, final)
	if doubles != 1 || completed != 1 || len(examples) != 4 {
		t.Errorf("checkDrain = %d doubles, %d completed, %q; want 1, 1 and 4 examples", doubles, completed, examples)
	}
}

func TestRaceViolation(t *testing.T) {
	tests := []struct {
		name    string
		winners []string
		owner   string
		status  tasklist.Status
		want    string
	}{
		{"one winner", []string{"a"}, "a", "in_progress", ""},
		{"no winner", nil, "", "pending", "0 winners"},
		{"two winners", []string{"a", "b"}, "b", "in_progress", "2 winners"},
		{"owner is not the winner", []string{"a"}, "b", "in_progress", "owned by \"b\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := raceViolation(tt.winners, tasklist.Task{ID: "1", Owner: tt.owner, Status: tt.status})
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("raceViolation(%v, owner %q) = %q; want %q", tt.winners, tt.owner, got, tt.want)
			}
		})
	}
}

// TestChildFailureIsReported checks that a child that fails before the
// barrier makes the run fail with the child's own message.
func TestChildFailureIsReported(t *testing.T) {
	r := testRunner(t)
	g := r.newGroup()
	defer g.abort()
	if _, err := g.spawnTroupe(t.Context(), "bad child", childConfig{Role: "nope", Root: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	err := g.waitReady(t.Context())
	if err == nil || !strings.Contains(err.Error(), "bad child") || !strings.Contains(err.Error(), `unknown role "nope"`) {
		t.Errorf("waitReady with a failing child = %v; want its name and message", err)
	}
}

func TestRunnerNeedsStart(t *testing.T) {
	var r Runner
	if _, err := r.Writers(t.Context(), WritersConfig{Writers: 1, Msgs: 1}); err == nil {
		t.Error("Writers on a zero Runner succeeded; want an error")
	}
}

func TestReportMarkdownAndJSON(t *testing.T) {
	rep := Report{
		Machine:  Probe(time.Now()),
		Writers:  []WritersResult{{Writers: 4, Msgs: 200, OK: 800, Attempted: 800, OKPerS: 1234.5}},
		Delivery: &DeliveryResult{N: 100, Sent: 100},
		Interop:  []InteropResult{{Mode: PeerLegacy, Troupe: 2, Node: 2, Msgs: 10, NSide: SideResult{Failed: 3, Failures: map[string]int{"ELOCKED": 3}}}},
		Race:     []RaceResult{{Agents: 4, Rounds: 20, Outcomes: map[string]int{"won": 20, "claimed": 60}}},
		Drain:    []DrainResult{{Agents: 4, Tasks: 50, TasksPerS: 99}},
		Skipped:  []string{"B8: no node"},
	}
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 4 | 200 | 0 | 0 | 800 / 800 | 0 | 1234.5 |", "3 (ELOCKED 3)", "claimed 60, won 20", "Skipped: B8: no node"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteMarkdown output lacks %q:\n%s", want, b.String())
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Errorf("json.Marshal(report) = %v", err)
	}
}

// peerSource returns the peer-bench folder for the interop test:
// $TROUPE_PEER_BENCH, else the shared copy next to the repository.
func peerSource(t *testing.T) string {
	if d := os.Getenv("TROUPE_PEER_BENCH"); d != "" {
		return d
	}
	d, _ := filepath.Abs("../../../shared/peer-bench")
	if _, err := os.Stat(filepath.Join(d, "inbox-writer.js")); err != nil {
		t.Skipf("no peer-bench folder (set TROUPE_PEER_BENCH): %v", err)
	}
	return d
}

func TestInterop(t *testing.T) {
	src := peerSource(t)
	r := testRunner(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	peer, err := r.PreparePeer(ctx, PeerConfig{Source: src, NodeModules: os.Getenv("TROUPE_PEER_NODE_MODULES")})
	if errors.Is(err, ErrNoNode) {
		t.Skipf("B8 needs node and npm: %v", err)
	}
	if err != nil {
		t.Fatalf("PreparePeer = %v", err)
	}
	defer peer.Close()
	for _, mode := range []string{PeerLegacy, PeerCurrent} {
		t.Run(mode, func(t *testing.T) {
			cfg := InteropConfig{Troupe: 2, Node: 2, Msgs: 8, Mode: mode}
			res, err := r.Interop(ctx, peer, cfg)
			if err != nil {
				t.Fatalf("Interop(%+v) = %v", cfg, err)
			}
			if res.TSide.OK != cfg.Troupe*cfg.Msgs || res.NSide.Attempted != cfg.Node*cfg.Msgs {
				t.Errorf("Interop: troupe %d ok, node %d attempted; want %d each", res.TSide.OK, res.NSide.Attempted, cfg.Troupe*cfg.Msgs)
			}
			if res.InvalidInbox != "" || !res.Verify.Clean() || res.Verify.Stored != res.TSide.OK+res.NSide.OK {
				t.Errorf("Interop: inbox %+v, invalid %q; want every acknowledged message once", res.Verify, res.InvalidInbox)
			}
		})
	}
}
