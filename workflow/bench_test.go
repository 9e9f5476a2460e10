package workflow

import (
	"context"
	"fmt"
	"testing"
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
