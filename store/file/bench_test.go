package file_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// Benchmarks of the code paths of the peer-baseline scenarios
// (docs/benchmarks.md, "The peer's scenarios"), in one process: goroutines stand in for the
// writer and claimer processes of internal/bench (troupe bench), which
// measures the same paths across processes.
//
//	go test -run='^$' -bench=. -benchtime=200x ./store/file/
//
// The inbox grows with b.N (every benchmark function call starts a fresh
// store), as it does in the scenarios: prefer a fixed -benchtime=Nx.

// benchText is the peer's workload: 300 characters starting with an id.
func benchText(id string) string {
	const lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "
	s := "<" + id + "> "
	for len(s) < 300 {
		s += lorem
	}
	return s[:300]
}

// benchStore opens a store in a temp folder with team "bench" (lead only)
// whose lead's inbox holds preload unread messages.
func benchStore(b *testing.B, preload int) *file.Store {
	b.Helper()
	s, err := file.Open(b.TempDir(), file.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := team.Create(b.Context(), s.Teams(), team.CreateOptions{Name: "bench", Now: time.Now(), Pick: rand.IntN}); err != nil {
		b.Fatal(err)
	}
	if preload > 0 {
		msgs := make([]mailbox.Message, preload)
		for i := range msgs {
			msgs[i] = mailbox.Message{ID: mailbox.NewID(), From: "pre", Text: benchText("pre-" + strconv.Itoa(i)),
				Summary: "pre", Color: "blue", Timestamp: time.Now(), Type: "message"}
		}
		data, err := json.MarshalIndent(msgs, "", "  ")
		if err != nil {
			b.Fatal(err)
		}
		inbox := filepath.Join(s.Root(), "teams", "bench", "inboxes", team.LeadName+".json")
		if err := os.MkdirAll(filepath.Dir(inbox), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(inbox, data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// benchSend runs b.N sends from parallel goroutines into one inbox and
// checks that every acknowledged message is there once.
func benchSend(b *testing.B, preload, parallelism int) {
	s := benchStore(b, preload)
	mail := s.Mail()
	ctx := b.Context()
	var seq atomic.Int64
	var failed atomic.Int64
	if parallelism > 0 {
		b.SetParallelism(parallelism)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := "m" + strconv.FormatInt(seq.Add(1), 10)
			msg := mailbox.Message{From: "w", Text: benchText(id), Summary: "msg " + id, Color: "blue", Timestamp: time.Now()}
			if _, err := mail.Send(ctx, "bench", team.LeadName, msg); err != nil {
				failed.Add(1)
				b.Errorf("Send(%s) = %v", id, err)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N-int(failed.Load()))/b.Elapsed().Seconds(), "msgs/s")
	msgs, err := mail.Read(ctx, "bench", team.LeadName, false)
	if err != nil {
		b.Fatal(err)
	}
	if want := preload + b.N - int(failed.Load()); len(msgs) != want {
		b.Fatalf("inbox holds %d messages after %d sends into %d; want %d", len(msgs), b.N, preload, want)
	}
}

// BenchmarkSend is B1: concurrent senders into one inbox (group commit).
// par=P runs P×GOMAXPROCS goroutines.
func BenchmarkSend(b *testing.B) {
	for _, p := range []int{1, 8, 32} {
		b.Run("par="+strconv.Itoa(p), func(b *testing.B) { benchSend(b, 0, p) })
	}
}

// BenchmarkSendOne is B1 at W=1: one sender, one message after another,
// never meeting a held lock.
func BenchmarkSendOne(b *testing.B) {
	s := benchStore(b, 0)
	mail := s.Mail()
	ctx := b.Context()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		id := "m" + strconv.Itoa(i)
		if _, err := mail.Send(ctx, "bench", team.LeadName, mailbox.Message{From: "w", Text: benchText(id), Summary: "msg " + id, Timestamp: time.Now()}); err != nil {
			b.Fatalf("Send(%s) = %v", id, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	if msgs, err := mail.Read(ctx, "bench", team.LeadName, false); err != nil || len(msgs) != b.N {
		b.Fatalf("inbox holds %d messages after %d sends (%v)", len(msgs), b.N, err)
	}
}

// BenchmarkSendPreloaded is B3: the cost of a send as the inbox grows
// (unread messages are never pruned).
func BenchmarkSendPreloaded(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchSend(b, n, 1) })
	}
}

// BenchmarkRead is B5: what a reader pays per check, read and decode, by
// inbox size.
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := benchStore(b, n)
			mail := s.Mail()
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				msgs, err := mail.Read(ctx, "bench", team.LeadName, true)
				if err != nil || len(msgs) != n {
					b.Fatalf("Read = %d messages, %v; want %d", len(msgs), err, n)
				}
			}
		})
	}
}

// BenchmarkReadUnread is a woken agent's read: one new message beside the
// read ones an inbox keeps (KeepRead, 100 by default).
func BenchmarkReadUnread(b *testing.B) {
	s := benchStore(b, file.DefaultKeepRead)
	mail := s.Mail()
	ctx := b.Context()
	msgs, err := mail.Read(ctx, "bench", team.LeadName, true)
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	if _, err := mail.MarkRead(ctx, "bench", team.LeadName, ids); err != nil {
		b.Fatal(err)
	}
	if _, err := mail.Send(ctx, "bench", team.LeadName, mailbox.Message{From: "w", Text: benchText("new")}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := mail.Read(ctx, "bench", team.LeadName, true)
		if err != nil || len(got) != 1 {
			b.Fatalf("Read = %d messages, %v; want the new one", len(got), err)
		}
	}
}

// BenchmarkClaimRace is B6: contenders goroutines race ClaimTask on one
// fresh task (in a fresh list) per iteration; exactly one must win.
func BenchmarkClaimRace(b *testing.B) {
	for _, n := range []int{4, 16, 64} {
		b.Run("contenders="+strconv.Itoa(n), func(b *testing.B) {
			s := benchStore(b, 0)
			ctx := b.Context()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				l := tasklist.New(s.Tasks(), "race-"+strconv.Itoa(i))
				task, err := l.Create(ctx, tasklist.Draft{Subject: "race"})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				winners := raceOnce(ctx, b, l, task.ID, n)
				if winners != 1 {
					b.Fatalf("round %d: %d winners; want 1", i, winners)
				}
			}
		})
	}
}

// raceOnce has n goroutines claim task id together and returns the number
// of winners; losers must be told the task is claimed.
func raceOnce(ctx context.Context, b *testing.B, l *tasklist.List, id string, n int) int {
	var winners atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range n {
		wg.Go(func() {
			<-start
			_, err := l.ClaimTask(ctx, id, "agent-"+strconv.Itoa(g))
			switch {
			case err == nil:
				winners.Add(1)
			case !errors.Is(err, tasklist.ErrClaimed):
				b.Errorf("ClaimTask(%s) = %v; want success or ErrClaimed", id, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(winners.Load())
}

// BenchmarkDrain is B7: agents goroutines Claim and complete 50
// independent tasks; no task may be claimed twice.
func BenchmarkDrain(b *testing.B) {
	const tasks = 50
	for _, agents := range []int{4, 16} {
		b.Run("agents="+strconv.Itoa(agents), func(b *testing.B) {
			s := benchStore(b, 0)
			ctx := b.Context()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				l := tasklist.New(s.Tasks(), "drain-"+strconv.Itoa(i))
				for j := range tasks {
					if _, err := l.Create(ctx, tasklist.Draft{Subject: fmt.Sprintf("task %d", j)}); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if claimed := drainOnce(ctx, b, l, agents); claimed != tasks {
					b.Fatalf("drain %d: %d claims of %d tasks; want each claimed once", i, claimed, tasks)
				}
			}
			b.ReportMetric(float64(b.N*tasks)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// drainOnce has agents goroutines loop Claim, then complete, until none is
// ready, and returns the number of claims (failing on a double claim).
func drainOnce(ctx context.Context, b *testing.B, l *tasklist.List, agents int) int {
	var mu sync.Mutex
	claimed := map[string]string{} // task id -> agent; guarded by mu
	var wg sync.WaitGroup
	for a := range agents {
		agent := "agent-" + strconv.Itoa(a)
		wg.Go(func() {
			for {
				t, err := l.Claim(ctx, agent)
				if errors.Is(err, tasklist.ErrNoneReady) {
					return
				}
				if err != nil {
					b.Errorf("Claim(%s) = %v", agent, err)
					return
				}
				mu.Lock()
				if prev, dup := claimed[t.ID]; dup {
					b.Errorf("task %s claimed by %s and %s", t.ID, prev, agent)
				}
				claimed[t.ID] = agent
				mu.Unlock()
				done := tasklist.StatusCompleted
				if _, err := l.Update(ctx, t.ID, tasklist.Update{Status: &done}); err != nil {
					b.Errorf("complete task %s: %v", t.ID, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return len(claimed)
}

// BenchmarkDrainStores is B7 with every agent on a store of its own over
// one root, as separate processes are (no shared reads, no shared lock
// waits): agents Claim and complete 50 independent tasks. It reports the
// whole Claim call's p99 (reading the list and every attempt) besides the
// rate.
func BenchmarkDrainStores(b *testing.B) {
	const tasks = 50
	for _, agents := range []int{4, 16, 64} {
		b.Run("agents="+strconv.Itoa(agents), func(b *testing.B) {
			root := b.TempDir()
			var stores []*file.Store
			for range agents {
				s, err := file.Open(root, file.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				stores = append(stores, s)
			}
			ctx := b.Context()
			var lat []time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				name := "drain-" + strconv.Itoa(i)
				for j := range tasks {
					if _, err := tasklist.New(stores[0].Tasks(), name).Create(ctx, tasklist.Draft{Subject: fmt.Sprintf("task %d", j)}); err != nil {
						b.Fatal(err)
					}
				}
				lists := make([]*tasklist.List, agents)
				for a, s := range stores {
					lists[a] = tasklist.New(s.Tasks(), name)
				}
				b.StartTimer()
				claimed, took := drainLists(ctx, b, lists)
				if claimed != tasks {
					b.Fatalf("drain %d: %d claims of %d tasks; want each claimed once", i, claimed, tasks)
				}
				lat = append(lat, took...)
			}
			b.ReportMetric(float64(b.N*tasks)/b.Elapsed().Seconds(), "tasks/s")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)])/1e6, "claim-p99-ms")
		})
	}
}

// drainLists has one goroutine per list loop Claim, then complete, until
// none is ready; it returns the number of claims (failing on a double
// claim) and the duration of each successful Claim.
func drainLists(ctx context.Context, b *testing.B, lists []*tasklist.List) (int, []time.Duration) {
	var mu sync.Mutex
	claimed := map[string]string{} // task id -> agent; guarded by mu
	var took []time.Duration       // guarded by mu
	var wg sync.WaitGroup
	for a, l := range lists {
		agent := "agent-" + strconv.Itoa(a)
		wg.Go(func() {
			for {
				start := time.Now()
				t, err := l.Claim(ctx, agent)
				if errors.Is(err, tasklist.ErrNoneReady) {
					return
				}
				if err != nil {
					b.Errorf("Claim(%s) = %v", agent, err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				if prev, dup := claimed[t.ID]; dup {
					b.Errorf("task %s claimed by %s and %s", t.ID, prev, agent)
				}
				claimed[t.ID] = agent
				took = append(took, d)
				mu.Unlock()
				done := tasklist.StatusCompleted
				if _, err := l.Update(ctx, t.ID, tasklist.Update{Status: &done}); err != nil {
					b.Errorf("complete task %s: %v", t.ID, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return len(claimed), took
}
