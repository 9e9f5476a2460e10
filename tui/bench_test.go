package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/task"
)

// big returns a model with 100 teammates, 1,000 tasks and a conversation
// of 5,000 messages (prompts, answers, tool calls, teammates' messages).
func big(b testing.TB) *model {
	m := newModel(context.Background(), &recorder{}, Options{NoColor: true, Now: func() time.Time { return t0 }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for i := range 100 {
		st := task.State{ID: task.ID(fmt.Sprintf("t%08d", i)), Type: task.InProcessTeammate, Status: task.Running, Start: t0,
			Detail: &task.Teammate{AgentName: fmt.Sprintf("mate%02d", i), Color: "blue", Recent: []string{"Reading a.go"}}}
		ev(m, session.Event{Kind: session.KindTaskStarted, Task: &task.Event{Kind: task.EventStarted, State: st}})
	}
	for i := range 900 {
		st := task.State{ID: task.ID(fmt.Sprintf("b%08d", i)), Type: task.LocalBash, Status: task.Running, Start: t0, Description: "sleep 1",
			Detail: &task.Shell{Command: "sleep 1"}}
		ev(m, session.Event{Kind: session.KindTaskStarted, Task: &task.Event{Kind: task.EventStarted, State: st}})
	}
	for i := range 1250 {
		m.convo.add(entry{kind: entryUser, text: fmt.Sprintf("prompt %d: please look at the parser and fix what is wrong", i)})
		m.convo.add(entry{kind: entryAssistant, text: "Here is **what I found**:\n- the `lexer` drops a byte\n- the test misses it\n\nFixing it now, then running the tests again to be sure."})
		m.convo.add(entry{kind: entryTool, id: fmt.Sprint(i), text: "Bash go test ./...", done: true, elapsed: time.Second, result: "ok"})
		m.convo.add(entry{kind: entryMessage, who: "mate01", color: "blue", text: "Done with task #3; the tests pass."})
	}
	return m
}

// One whole frame of the big model: the target is under 5 ms.
func BenchmarkView(b *testing.B) {
	m := big(b)
	m.frame() // the first frame renders the visible entries once
	b.ResetTimer()
	for b.Loop() {
		m.spin++ // as the spinner does: a frame that must be redrawn
		m.frame()
	}
}

// The first frame after a resize re-wraps what is on screen.
func BenchmarkViewResize(b *testing.B) {
	m := big(b)
	w := 120
	for b.Loop() {
		w = 220 - w // 100 and 120 in turn: every frame has a new width
		m.Update(tea.WindowSizeMsg{Width: w, Height: 40})
		m.frame()
	}
}

// The memory the big model holds (after a frame), in bytes.
func BenchmarkMemory(b *testing.B) {
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := big(b)
		m.frame()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc), "heap-bytes")
		runtime.KeepAlive(m)
	}
}

// outWatch is the program's terminal: it notes when a byte shows up.
type outWatch struct {
	mu    sync.Mutex
	want  byte
	since time.Time
	seen  chan time.Duration
}

func (o *outWatch) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.since.IsZero() && bytes.IndexByte(p, o.want) >= 0 {
		o.seen <- time.Since(o.since)
		o.since = time.Time{}
	}
	return len(p), nil
}

func (o *outWatch) arm(c byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.want, o.since = c, time.Now()
}

// Keystroke to frame through a real Bubble Tea program (input on a pipe,
// output watched for the typed letter) while the lead's answer streams
// at 200 deltas a second into the big model. Reports p50 and p99 in ms;
// the target is p99 under 16 ms.
func BenchmarkKeystrokeToFrame(b *testing.B) {
	m := big(b)
	in, inW := io.Pipe()
	out := &outWatch{seen: make(chan time.Duration, 1)}
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out), tea.WithWindowSize(120, 40), tea.WithFPS(120))
	done := make(chan struct{})
	go func() { defer close(done); p.Run() }()
	stop := make(chan struct{})
	go func() { // the stream: 200 deltas a second, digits only
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		p.Send(eventMsg{session.Event{Kind: session.KindTurnStarted, Time: t0}})
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.Send(eventMsg{session.Event{Kind: session.KindAgent, Agent: &agent.Event{Type: agent.EventDelta, Text: "123 "}}})
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	var lat []time.Duration
	letters := []byte("QXJVWZ")
	for i := 0; b.Loop(); i++ {
		c := letters[i%len(letters)]
		out.arm(c)
		inW.Write([]byte{c})
		select {
		case d := <-out.seen:
			lat = append(lat, d)
		case <-time.After(2 * time.Second):
			b.Fatalf("the typed %q never reached the screen", c)
		}
		if i%40 == 39 { // keep the prompt short, as a person would
			inW.Write([]byte{0x15}) // Ctrl+U clears the prompt (Ctrl+C would interrupt the working lead)
			time.Sleep(20 * time.Millisecond)
		}
	}
	close(stop)
	p.Quit()
	inW.Close()
	<-done
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		b.ReportMetric(float64(lat[n/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[n*99/100].Microseconds())/1000, "p99-ms")
	}
}

// A frame while an answer holding a 40-line Go block streams, in color,
// over the big model whose answers hold code blocks too: each delta
// renders the answer again, its closed block from the cache
// (highlight.go).
func BenchmarkViewCode(b *testing.B) {
	m := big(b)
	m.st = newStyles(false)
	block := "```go\n" + strings.Repeat("func f(x int) string { return fmt.Sprint(x) } // ok\n", 40) + "```\n"
	for i := range 50 {
		m.convo.add(entry{kind: entryAssistant, text: fmt.Sprintf("Answer %d:\n", i) + block})
	}
	m.convo.stream("Streaming:\n" + block)
	m.frame()
	b.ResetTimer()
	for b.Loop() {
		m.convo.stream("more ")
		m.frame()
	}
}
