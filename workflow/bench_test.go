package workflow

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkAgentCall measures the engine's own cost of one agent() call:
// a script making b.N calls in a parallel() of 100 at a time, on a runner
// that answers at once. The figure is per call (docs/benchmarks.md).
func BenchmarkAgentCall(b *testing.B) {
	noop := RunnerFunc(func(context.Context, Request) (Reply, error) { return Reply{Text: "ok"}, nil })
	s, err := Parse("bench.js", `export const meta = { name: "bench" }
let left = args.n, done = 0
while (left > 0) {
  const k = Math.min(left, 100)
  left -= k
  const r = await parallel(Array.from({ length: k }, (_, i) => () => agent("task " + i, { label: "t" + i })))
  done += r.length
}
return done`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Run(context.Background(), s, []byte(fmt.Sprint(`{"n":`, b.N, `}`)), noop, Options{MaxAgents: b.N + 1})
	if err != nil {
		b.Fatal(err)
	}
	if string(res.Value) != fmt.Sprint(b.N) {
		b.Fatalf("value = %s; want %d", res.Value, b.N)
	}
}

// BenchmarkAgentCallSequential is one await agent() after another: the
// round trip through the loop with nothing to overlap it.
func BenchmarkAgentCallSequential(b *testing.B) {
	noop := RunnerFunc(func(context.Context, Request) (Reply, error) { return Reply{Text: "ok"}, nil })
	s, err := Parse("bench.js", `export const meta = { name: "bench" }
for (let i = 0; i < args.n; i++) await agent("task " + i)
return args.n`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := Run(context.Background(), s, []byte(fmt.Sprint(`{"n":`, b.N, `}`)), noop, Options{MaxAgents: b.N + 1}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPipeline100x3 runs 100 items through a 3-stage pipeline whose
// agents each take 10 ms, 4 at a time: the ideal wall time is 300 agents
// / 4 slots * 10 ms = 750 ms; it reports the ratio to it.
func BenchmarkPipeline100x3(b *testing.B) {
	const work = 10 * time.Millisecond
	sleepy := RunnerFunc(func(ctx context.Context, _ Request) (Reply, error) {
		t := time.NewTimer(work)
		defer t.Stop()
		select {
		case <-t.C:
			return Reply{Text: "ok"}, nil
		case <-ctx.Done():
			return Reply{}, context.Cause(ctx)
		}
	})
	s, err := Parse("bench.js", `export const meta = { name: "pipe" }
const items = Array.from({ length: 100 }, (_, i) => i)
const r = await pipeline(items,
  (i) => agent("a " + i), (p, i) => agent("b " + i), (p, i) => agent("c " + i))
return r.length`)
	if err != nil {
		b.Fatal(err)
	}
	ideal := time.Duration(300/DefaultConcurrency) * work
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := Run(context.Background(), s, nil, sleepy, Options{MaxAgents: 300}); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total)/float64(b.N)/float64(ideal), "x-ideal")
}

// BenchmarkIdleRun is a run of a script that calls no agent: the VM, its
// globals and the loop, made and torn down (its allocations are the
// idle VM's memory).
func BenchmarkIdleRun(b *testing.B) {
	s, err := Parse("bench.js", "export const meta = { name: \"idle\" }\nreturn 1")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), s, nil, RunnerFunc(nil), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
