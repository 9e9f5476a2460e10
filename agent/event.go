package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/llm"
)

// EventType is the kind of an agent Event.
type EventType string

// Event types.
const (
	EventUser       EventType = "user"        // Message was added as user input
	EventDelta      EventType = "delta"       // Text is a streamed text (or thinking) delta
	EventAssistant  EventType = "assistant"   // Message is the model's complete answer; Usage its tokens
	EventToolUse    EventType = "tool_use"    // Call is about to run
	EventToolResult EventType = "tool_result" // Call ran; ToolResult is what the model sees
	EventRetry      EventType = "retry"       // the provider retries; Err says why
	EventCompact    EventType = "compact"     // the conversation was compacted; Text is the summary
	EventResult     EventType = "result"      // the run ended; Result describes it
)

// Event is something that happened in the loop.
type Event struct {
	Type       EventType
	At         time.Time
	Text       string
	Thinking   bool
	Message    *llm.Message
	Usage      *llm.Usage
	Call       *llm.Block
	ToolResult *llm.Block
	Elapsed    time.Duration
	Err        error
	Result     *Result
	// Denied is, on an EventToolResult, why the call was not allowed to
	// run (a person or a rule refused it); "" when it ran or failed
	// otherwise.
	Denied string
}

// MaxRecent is how many recent activities Progress keeps.
const MaxRecent = 5

// Activity is one tool call, for progress displays.
type Activity struct {
	Tool  string
	Input string // a short description of the input
	At    time.Time
}

// Progress is a snapshot of what an agent has done.
type Progress struct {
	ToolUses          int
	LatestInputTokens int64 // input tokens of the latest call (the context size)
	OutputTokens      int64 // cumulative
	Compactions       int
	Recent            []Activity // the last MaxRecent tool calls, oldest first

	lastOutput int64
}

// Summary returns a one-line description of the progress.
func (p Progress) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d tool uses, %d tokens in context, %d output tokens", p.ToolUses, p.LatestInputTokens, p.OutputTokens)
	if n := len(p.Recent); n > 0 {
		last := p.Recent[n-1]
		fmt.Fprintf(&b, "; last: %s", last.Tool)
		if last.Input != "" {
			fmt.Fprintf(&b, " %s", last.Input)
		}
	}
	return b.String()
}

// transcript writes events as JSON lines.
type transcript struct {
	mu  sync.Mutex
	w   io.Writer // guarded by mu
	now func() time.Time
}

func newTranscript(w io.Writer, now func() time.Time) *transcript {
	return &transcript{w: w, now: now}
}

// TranscriptLine is the JSON form of an event in a transcript
// (Config.Transcript), one a line. Images appear without their data
// (llm.Image.Stub).
type TranscriptLine struct {
	Type       EventType    `json:"type"`
	Time       string       `json:"time"`
	Message    *llm.Message `json:"message,omitempty"`
	Usage      *llm.Usage   `json:"usage,omitempty"`
	Call       *llm.Block   `json:"tool_use,omitempty"`
	ToolResult *llm.Block   `json:"tool_result,omitempty"`
	ElapsedMS  int64        `json:"elapsed_ms,omitempty"`
	Text       string       `json:"text,omitempty"`
	Error      string       `json:"error,omitempty"`
	Result     *Result      `json:"result,omitempty"`
}

func (t *transcript) write(e Event) {
	if t == nil || t.w == nil || e.Type == EventDelta {
		return
	}
	line := TranscriptLine{Type: e.Type, Time: e.At.UTC().Format(time.RFC3339Nano), Message: e.Message, Usage: e.Usage,
		Call: e.Call, ToolResult: e.ToolResult, ElapsedMS: e.Elapsed.Milliseconds(), Result: e.Result}
	// A transcript is for reading: images keep their type and size, not
	// their data, which would fill a line with megabytes of base64 twice
	// (in the tool result and in the user message that carries it).
	if line.Message != nil {
		m := line.Message.Stubbed()
		line.Message = &m
	}
	if line.ToolResult != nil {
		b := line.ToolResult.Stubbed()
		line.ToolResult = &b
	}
	if e.Type == EventCompact {
		line.Text = e.Text
	}
	if e.Err != nil {
		line.Error = e.Err.Error()
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.w.Write(append(b, '\n'))
}
