package task

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchBytes is what each capture run writes.
const benchBytes = 200 << 20

// BenchmarkShellCapture compares a shell task capturing a writer that goes
// as fast as it can (head -c 200M /dev/zero, through the task's pipe and
// capped writer into its output file) with cat doing the same copy
// (head -c 200M /dev/zero | cat > file), in the same run.
func BenchmarkShellCapture(b *testing.B) {
	dir := b.TempDir()
	r := New(Config{Dir: dir, PollInterval: -1})
	b.Cleanup(func() { r.Close(context.Background()) })
	sub := r.Subscribe()
	defer sub.Close()
	cmd := fmt.Sprintf("head -c %d /dev/zero", benchBytes)
	var capture, cat time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		s, err := r.StartShell(ShellSpec{Command: cmd})
		if err != nil {
			b.Fatal(err)
		}
		for {
			e, err := sub.Next(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			if e.Kind == EventTerminated && e.State.ID == s.ID {
				break
			}
		}
		capture += time.Since(start)
		if fi, _ := os.Stat(s.OutputFile); fi.Size() != benchBytes {
			b.Fatalf("captured %d bytes; want %d", fi.Size(), benchBytes)
		}
		os.Remove(s.OutputFile)

		out := filepath.Join(dir, "cat.out")
		start = time.Now()
		if err := exec.Command("bash", "-c", cmd+" | cat > "+out).Run(); err != nil {
			b.Fatal(err)
		}
		cat += time.Since(start)
		os.Remove(out)
		n++
	}
	mbps := func(d time.Duration) float64 { return float64(n) * benchBytes / (1 << 20) / d.Seconds() }
	b.ReportMetric(mbps(capture), "capture-MiB/s")
	b.ReportMetric(mbps(cat), "cat-MiB/s")
	b.ReportMetric(mbps(capture)/mbps(cat), "capture/cat")
}

// BenchmarkPoll measures one poll step over 1,000 live tasks, idle (no new
// output) and active (every task wrote 100 bytes since the last step).
func BenchmarkPoll(b *testing.B) {
	for _, active := range []bool{false, true} {
		name := "idle"
		if active {
			name = "active"
		}
		b.Run(name+"/1000", func(b *testing.B) {
			dir := b.TempDir()
			r := New(Config{Dir: dir, PollInterval: -1})
			defer r.Close(context.Background())
			outs := make([]*Output, 1000)
			for i := range outs {
				id := NewID(LocalAgent)
				o, err := OpenOutput(OutputPath(dir, id), 0)
				if err != nil {
					b.Fatal(err)
				}
				defer o.Close()
				o.Write([]byte("started\n"))
				outs[i] = o
				r.Register(State{ID: id, Type: LocalAgent, Status: Running, OutputFile: o.Path(), Detail: &Agent{}}, nil)
			}
			r.Poll(b.Context())
			line := make([]byte, 100)
			for b.Loop() {
				if active {
					b.StopTimer()
					for _, o := range outs {
						o.Write(line)
					}
					b.StartTimer()
				}
				rep, err := r.Poll(b.Context())
				if err != nil || (active && len(rep.Output) != 1000) {
					b.Fatalf("Poll = %d chunks, %v", len(rep.Output), err)
				}
			}
		})
	}
}

// BenchmarkOutputTail reads the last 20 lines of a 200 MB output file, as
// TaskOutput's tail does, against reaching its end in 64 KiB reads from
// the start (TaskOutput's paging: about 3,200 calls).
func BenchmarkOutputTail(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.output")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	filler(b, f, benchBytes)
	numbered(b, f, 0, 20)
	f.Close()
	b.Run("tail", func(b *testing.B) {
		for b.Loop() {
			rd, err := ReadOutputTail(path, 20, 64<<10)
			if err != nil || rd.End() != rd.Size {
				b.Fatal(rd.Offset, err)
			}
		}
	})
	b.Run("paging", func(b *testing.B) {
		for b.Loop() {
			calls := 0
			for off := int64(0); ; calls++ {
				rd, err := ReadOutputAt(path, off, 64<<10)
				if err != nil {
					b.Fatal(err)
				}
				if len(rd.Data) == 0 {
					break
				}
				off = rd.End()
			}
			b.ReportMetric(float64(calls), "calls/op")
		}
	})
}
