package swarm

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/backend/inprocess"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// BenchmarkSpawn spawns N in-process teammates on the file store one at a
// time, each running one scripted turn and going idle, and reports the
// wall time per spawn over the first and the last tenth of the team, and
// the process's CPU time per spawn until all are idle (on a shared
// machine the CPU time says more about flatness than the wall time)
// (issue 18 item 7: flat in team size is the target; 1,000 spawns were
// seen taking 117 s, the last ones about 220 ms each).
func BenchmarkSpawn(b *testing.B) {
	for _, n := range []int{10, 100, 300, 1000} {
		b.Run(fmt.Sprintf("teammates=%d", n), func(b *testing.B) {
			for range b.N {
				cpu0 := cpuTime(b)
				first, last, total, firstKB, lastKB := spawnTeam(b, n)
				b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(n), "cpu-ms/spawn")
				b.ReportMetric(firstKB, "first10%-KB/spawn")
				b.ReportMetric(lastKB, "last10%-KB/spawn")
				b.ReportMetric(float64(first.Microseconds())/1000, "first10%-ms/spawn")
				b.ReportMetric(float64(last.Microseconds())/1000, "last10%-ms/spawn")
				b.ReportMetric(total.Seconds(), "s-total")
			}
		})
	}
}

// scriptedFileLead returns a lead on a file store for up to n in-process
// teammates whose model answers every turn "ok", and the channel of their
// names as each goes idle; done closes the lead, then the store.
func scriptedFileLead(b *testing.B, n int) (lead *Lead, idle <-chan string, done func()) {
	st, err := file.Open(b.TempDir(), file.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s, err := scripted.Parse([]byte(`{"turns":[{"match":{},"reply":{"text":"ok"},"repeat":true}]}`))
	if err != nil {
		b.Fatal(err)
	}
	model := scripted.New(s)
	idled := make(chan string, n)
	lead, err = NewLead(LeadConfig{Teams: st.Teams(), Mail: st.Mail(), Tasks: st.Tasks(), Cwd: b.TempDir(), Backend: inprocess.New(), MaxTeammates: n,
		Launch: func(ctx context.Context, l *Lead, m team.Member, r SpawnRequest, be string) (backend.Spec, error) {
			return backend.Spec{Run: func(ctx context.Context) error {
				tm, err := NewTeammate(TeammateConfig{Team: l.Team(), Name: m.Name, Teams: st.Teams(), Mail: st.Mail(), Tasks: st.Tasks(), Prompt: r.Prompt,
					OnEvent: func(e Event) {
						if e.Kind == EventIdle && e.Agent == m.Name {
							idled <- m.Name
						}
					},
					Build: func(*Teammate) (agent.Config, error) {
						reg, _ := tool.NewRegistry()
						return agent.Config{Model: model, System: "teammate", Tools: reg}, nil
					}})
				if err != nil {
					return err
				}
				return tm.Run(ctx)
			}}, nil
		}})
	if err != nil {
		st.Close()
		b.Fatal(err)
	}
	return lead, idled, func() {
		lead.Close(context.Background())
		st.Close()
	}
}

// spawnTeam spawns n teammates and returns the mean wall time of a spawn
// in the first and the last tenth, the time until all were idle, and the
// KiB the process allocated per spawn over the first and the last tenth
// (the garbage collector's work follows it; unlike the times it does not
// depend on what else the machine is doing).
func spawnTeam(b *testing.B, n int) (first, last, total time.Duration, firstKB, lastKB float64) {
	lead, idle, done := scriptedFileLead(b, n)
	defer done()
	ctx := context.Background()
	if _, err := lead.CreateTeam(ctx, "spawn", "", ""); err != nil {
		b.Fatal(err)
	}
	tenth := max(n/10, 1)
	allocated := func() float64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.TotalAlloc) / 1024
	}
	start := time.Now()
	for i := range n {
		switch i {
		case 0:
			firstKB = -allocated()
		case tenth:
			firstKB += allocated()
		case n - tenth:
			lastKB = -allocated()
		}
		t0 := time.Now()
		if _, err := lead.Spawn(ctx, SpawnRequest{Name: fmt.Sprintf("t%04d", i), Prompt: "go"}); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		if i < tenth {
			first += d
		}
		if i >= n-tenth {
			last += d
		}
	}
	lastKB += allocated()
	for range n {
		<-idle
	}
	return first / time.Duration(tenth), last / time.Duration(tenth), time.Since(start), firstKB / float64(tenth), lastKB / float64(tenth)
}
