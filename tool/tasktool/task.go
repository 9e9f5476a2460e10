// Package tasktool provides the tools that let a model work with the session's
// background tasks (the task registry of package
// github.com/troupe-dev/troupe/task): TaskOutput reads a task's output and
// status, optionally waiting for it to finish, and TaskStop stops a running
// task. BashBackground wires the Bash tool's run_in_background to the
// registry.
//
// The tools are safe for concurrent use.
package tasktool

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/llm"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// Defaults.
const (
	DefaultTimeout    = 30 * time.Second
	DefaultMaxTimeout = 10 * time.Minute
	DefaultMaxRead    = 64 << 10
)

// BashOptions configures the shells BashBackground starts.
type BashOptions struct {
	// AgentID is the agent whose Bash tool starts the shells ("" for the
	// lead); Registry.KillForAgent(AgentID) stops them when it exits.
	AgentID string
	Dir     string   // working directory; "" is the current one
	Env     []string // nil inherits the environment
}

// BashBackground returns the function for tool/bash.Config.Background: it
// starts command as a local_bash task of reg and returns its id and output
// file. When the shell could not start, the task (registered as failed) is
// still reported by id with the error.
func BashBackground(reg *taskreg.Registry, opt BashOptions) func(ctx context.Context, command, description, toolUseID string) (string, string, error) {
	return func(ctx context.Context, command, description, toolUseID string) (string, string, error) {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		s, err := reg.StartShell(taskreg.ShellSpec{
			Command: command, Description: description, ToolUseID: toolUseID,
			AgentID: opt.AgentID, Dir: opt.Dir, Env: opt.Env,
		})
		return string(s.ID), s.OutputFile, err
	}
}

// Config configures TaskOutput.
type Config struct {
	Registry *taskreg.Registry
	// DefaultTimeout is the wait of a blocking call that gives no timeout
	// (default 30 s); MaxTimeout caps any wait (default 10 min).
	DefaultTimeout, MaxTimeout time.Duration
	// MaxRead bounds the output one call returns (default 64 KiB); the
	// rest is returned by the next calls, or read with tail or offset.
	MaxRead int64
	// Resolve, when set, maps a task_id that is no task id (a named
	// agent's name, say) to a task; see tool/agenttool.Tool.Lookup.
	Resolve Resolver
}

// Resolver maps a name to a task id.
type Resolver func(name string) (taskreg.ID, bool)

// resolve returns the task id that id names: itself when it is a task of
// reg, else what r maps it to.
func resolve(reg *taskreg.Registry, r Resolver, id taskreg.ID) taskreg.ID {
	if _, ok := reg.Get(id); ok || r == nil {
		return id
	}
	if to, ok := r(string(id)); ok {
		return to
	}
	return id
}

// Output is the TaskOutput tool. It remembers, per task, how far it has
// returned the output, so that each call returns only what is new.
type Output struct {
	cfg Config

	mu      sync.Mutex
	offsets map[taskreg.ID]int64 // guarded by mu
}

var _ tool.Tool = (*Output)(nil)

// NewOutput returns the TaskOutput tool. cfg.Registry is required.
func NewOutput(cfg Config) *Output {
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = DefaultMaxTimeout
	}
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = DefaultTimeout
	}
	cfg.DefaultTimeout = min(cfg.DefaultTimeout, cfg.MaxTimeout)
	if cfg.MaxRead <= 0 {
		cfg.MaxRead = DefaultMaxRead
	}
	return &Output{cfg: cfg, offsets: map[taskreg.ID]int64{}}
}

//go:embed taskoutput.md
var outputDescription string

const outputSchema = `{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "description": "The id of the background task (a Bash run_in_background shell or a background Agent)"},
    "block": {"type": "boolean", "description": "Wait for the task to finish before returning (default true)"},
    "timeout": {"type": "number", "description": "With block: how long to wait at most, in milliseconds (default %d, max %d)"},
    "tail": {"type": "integer", "minimum": 1, "description": "Return the last N lines of the output (at most its last %d bytes) instead of what is new"},
    "offset": {"type": "integer", "minimum": 0, "description": "Return the output from this byte offset of the whole output (0: its start), at most %d bytes"}
  },
  "required": ["task_id"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (o *Output) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "TaskOutput",
		Description: strings.TrimSpace(outputDescription),
		InputSchema: json.RawMessage(fmt.Sprintf(outputSchema, o.cfg.DefaultTimeout.Milliseconds(), o.cfg.MaxTimeout.Milliseconds(), o.cfg.MaxRead, o.cfg.MaxRead)),
	}
}

// ReadOnly implements tool.Tool: reading output changes nothing outside
// the agent.
func (*Output) ReadOnly(json.RawMessage) bool { return true }

type outputInput struct {
	TaskID  string   `json:"task_id"`
	Block   *bool    `json:"block"`
	Timeout *float64 `json:"timeout"`
	Tail    *int64   `json:"tail"`
	Offset  *int64   `json:"offset"`
}

// readMode is which part of the output a call returns.
type readMode struct {
	tail   int   // > 0: the last tail lines
	offset int64 // >= 0: from this byte; -1: what is new
}

// Run implements tool.Tool. It returns a Go error only when ctx ends.
func (o *Output) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in outputInput
	if res, ok := tool.Decode("TaskOutput", call.Input, &in); !ok {
		return res, nil
	}
	id := taskreg.ID(strings.TrimSpace(in.TaskID))
	if id == "" {
		return tool.Errorf("TaskOutput: task_id is required"), nil
	}
	timeout := o.cfg.DefaultTimeout
	if in.Timeout != nil {
		ms := *in.Timeout
		switch {
		case ms < 0:
			return tool.Errorf("TaskOutput: timeout must be a non-negative number of milliseconds, got %v", ms), nil
		case ms > float64(o.cfg.MaxTimeout.Milliseconds()):
			timeout = o.cfg.MaxTimeout
		default:
			timeout = time.Duration(ms * float64(time.Millisecond))
		}
	}
	mode := readMode{offset: -1}
	switch {
	case in.Tail != nil && in.Offset != nil:
		return tool.Errorf("TaskOutput: give tail or offset, not both (tail: the last lines; offset: from a byte on)"), nil
	case in.Tail != nil && *in.Tail <= 0:
		return tool.Errorf("TaskOutput: tail must be a positive number of lines, got %d", *in.Tail), nil
	case in.Tail != nil:
		mode.tail = int(min(*in.Tail, 1<<20))
	case in.Offset != nil && *in.Offset < 0:
		return tool.Errorf("TaskOutput: offset must be a byte offset of 0 or more, got %d", *in.Offset), nil
	case in.Offset != nil:
		mode.offset = *in.Offset
	}
	block := in.Block == nil || *in.Block
	reg := o.cfg.Registry
	if reg == nil {
		return tool.Errorf("TaskOutput: background tasks are not available in this session"), nil
	}
	var sub *taskreg.Subscription
	if block {
		// Subscribe before looking, so that no end is missed in between.
		sub = reg.Subscribe()
		defer sub.Close()
	}
	id = resolve(reg, o.cfg.Resolve, id)
	s, ok := reg.Get(id)
	if !ok {
		o.mu.Lock()
		delete(o.offsets, id) // evicted: forget it
		o.mu.Unlock()
		if ev, gone := reg.Evicted(id); gone {
			return tool.Errorf("TaskOutput: task %s (%s, %q) ended %s and was removed %s after its notification, with its output file; its notification showed the end of its output. Known tasks: %s",
				id, ev.Status, ev.Description, ev.End.UTC().Format(time.RFC3339), grace(ev), known(reg)), nil
		}
		return tool.Errorf("TaskOutput: task_id %q: no such task; known tasks: %s", id, known(reg)), nil
	}
	timedOut := false
	if block && !s.Status.Terminal() {
		var err error
		s, timedOut, err = waitEnd(ctx, sub, reg, id, timeout)
		if err != nil {
			return tool.Result{}, err
		}
	}
	return o.report(s, block && timedOut, mode), nil
}

// grace says how long after its notification an evicted task went.
func grace(s taskreg.State) string {
	if d := s.EvictAfter.Sub(s.End); d > 0 {
		return "about " + d.Round(time.Second).String()
	}
	return "some time"
}

// waitEnd waits, woken by the registry's events, until task id is
// terminal, gone, or timeout passes. It returns the latest state.
func waitEnd(ctx context.Context, sub *taskreg.Subscription, reg *taskreg.Registry, id taskreg.ID, timeout time.Duration) (taskreg.State, bool, error) {
	wctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	last, _ := reg.Get(id)
	for {
		if s, ok := reg.Get(id); ok {
			last = s
			if s.Status.Terminal() {
				return s, false, nil
			}
		} else {
			return last, false, nil // evicted meanwhile
		}
		for {
			e, err := sub.Next(wctx)
			if err != nil {
				if ctx.Err() != nil {
					return last, false, context.Cause(ctx)
				}
				if errors.Is(err, errTimeout) {
					return last, true, nil
				}
				return last, false, nil // registry closed
			}
			if e.State.ID == id {
				break
			}
		}
	}
}

var errTimeout = errors.New("task output: wait timed out")

// writeAgentOutcome renders the error, usage and, once s ended, the result
// of an agent run, local or remote.
func writeAgentOutcome(b *strings.Builder, s taskreg.State, errText string, u taskreg.Usage, result string) {
	if errText != "" {
		fmt.Fprintf(b, "<error>%s</error>\n", errText)
	}
	fmt.Fprintf(b, "<usage>total_tokens: %d, tool_uses: %d</usage>\n", u.TotalTokens, u.ToolUses)
	if s.Status.Terminal() && result != "" {
		fmt.Fprintf(b, "<result>\n%s\n</result>\n", result)
	}
}

// report reads the output of s that mode asks for and renders the result.
func (o *Output) report(s taskreg.State, timedOut bool, mode readMode) tool.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "<task_id>%s</task_id>\n<task_type>%s</task_type>\n<status>%s</status>\n", s.ID, s.Type, s.Status)
	if timedOut {
		b.WriteString("<retrieval_status>timeout: the task is still running</retrieval_status>\n")
	}
	switch d := s.Detail.(type) {
	case *taskreg.Shell:
		if d.Exited {
			fmt.Fprintf(&b, "<exit_code>%d</exit_code>\n", d.ExitCode)
		}
		if d.Error != "" {
			fmt.Fprintf(&b, "<error>%s</error>\n", d.Error)
		}
	case *taskreg.Agent:
		writeAgentOutcome(&b, s, d.Error, d.Usage, d.Result)
	case *taskreg.Remote:
		if d.Worker != "" {
			fmt.Fprintf(&b, "<worker>%s (attempt %d)</worker>\n", d.Worker, d.Attempt)
		}
		if d.Progress != "" {
			fmt.Fprintf(&b, "<progress>%s</progress>\n", d.Progress)
		}
		writeAgentOutcome(&b, s, d.Error, d.Usage, d.Result)
	}
	if s.OutputFile != "" {
		rd, asked, err := o.read(s, mode)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			b.WriteString("<output_error>its output file is gone (removed from the temporary folder)</output_error>\n")
		case err != nil:
			fmt.Fprintf(&b, "<output_error>%v</output_error>\n", err)
		default:
			writeOutput(&b, rd, asked, mode, o.cfg.MaxRead)
		}
	}
	return tool.Result{Content: strings.TrimRight(b.String(), "\n")}
}

// writeOutput renders rd, read for mode from offset asked (-1 for a tail).
func writeOutput(b *strings.Builder, rd taskreg.Read, asked int64, mode readMode, maxRead int64) {
	if asked >= 0 && asked < rd.Start {
		fmt.Fprintf(b, "[bytes %d-%d were dropped: a task's output keeps only its last part; what follows starts at byte %d]\n", asked, rd.Start, rd.Start)
	}
	if len(rd.Data) == 0 {
		if mode.offset > rd.Size {
			fmt.Fprintf(b, "<output>(nothing at offset %d: the output has %d bytes)</output>", mode.offset, rd.Size)
		} else {
			b.WriteString("<output>(no new output)</output>")
		}
		return
	}
	b.WriteString("<output>\n")
	b.Write(rd.Data)
	if rd.Data[len(rd.Data)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("</output>")
	earlier := rd.Offset > rd.Start
	if rd.End() == rd.Size && mode.offset < 0 && (mode.tail == 0 || !earlier) {
		return // all of it, or all that is new
	}
	fmt.Fprintf(b, "\n[shown: bytes %d-%d of %d", rd.Offset, rd.End(), rd.Size)
	if mode.tail > 0 && earlier && bytes.Count(bytes.TrimSuffix(rd.Data, []byte("\n")), []byte("\n"))+1 < mode.tail {
		fmt.Fprintf(b, "; the last %d lines are longer than %d bytes: only their end is shown", mode.tail, maxRead)
	}
	switch {
	case rd.End() < rd.Size:
		b.WriteString("; more output follows: call TaskOutput again for the next part, or use tail for the end]")
	case earlier:
		b.WriteString("; use offset to read an earlier part]")
	default:
		b.WriteString("]")
	}
}

// read returns the part of s's output that mode asks for, and the offset
// it asked from (-1 for a tail). Every read moves the task's offset to
// where it ended, so that the next plain call returns what follows.
func (o *Output) read(s taskreg.State, mode readMode) (taskreg.Read, int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock() // one reader per tool at a time: offsets stay exact
	var rd taskreg.Read
	var err error
	asked := int64(-1)
	if mode.tail > 0 {
		rd, err = taskreg.ReadOutputTail(s.OutputFile, mode.tail, o.cfg.MaxRead)
	} else {
		asked = o.offsets[s.ID]
		if mode.offset >= 0 {
			asked = mode.offset
		}
		rd, err = taskreg.ReadOutputAt(s.OutputFile, asked, o.cfg.MaxRead)
	}
	if err != nil {
		return rd, asked, err
	}
	o.offsets[s.ID] = rd.End()
	return rd, asked, nil
}

// known lists the ids of the registry's tasks for an error message.
func known(reg *taskreg.Registry) string {
	var ids []string
	for _, s := range reg.List() {
		ids = append(ids, string(s.ID)+" ("+string(s.Type)+", "+string(s.Status)+")")
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// Stop is the TaskStop tool.
type Stop struct {
	reg     *taskreg.Registry
	resolve Resolver
}

var _ tool.Tool = (*Stop)(nil)

// NewStop returns the TaskStop tool stopping tasks of reg. resolve, when
// not nil, maps a task_id that is no task id (a named agent's name) to a
// task.
func NewStop(reg *taskreg.Registry, resolve Resolver) *Stop { return &Stop{reg: reg, resolve: resolve} }

const stopSchema = `{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "description": "The id of the background task to stop (or the name of a named background agent)"},
    "shell_id": {"type": "string", "description": "Deprecated: use task_id"}
  },
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*Stop) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name: "TaskStop",
		Description: "Stops a running background task (a Bash command started with run_in_background, or a background Agent) by its id.\n" +
			"- The task ends as killed; a shell's whole process group is killed.\n" +
			"- You get no completion notification for a task you stopped.",
		InputSchema: json.RawMessage(stopSchema),
	}
}

// ReadOnly implements tool.Tool.
func (*Stop) ReadOnly(json.RawMessage) bool { return false }

type stopInput struct {
	TaskID  string `json:"task_id"`
	ShellID string `json:"shell_id"`
}

// stopOutput is TaskStop's result, as in docs/protocol.md section 9.
type stopOutput struct {
	Message  string `json:"message"`
	TaskID   string `json:"task_id"`
	TaskType string `json:"task_type"`
	Command  string `json:"command,omitempty"`
}

// Run implements tool.Tool.
func (t *Stop) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in stopInput
	if res, ok := tool.Decode("TaskStop", call.Input, &in); !ok {
		return res, nil
	}
	tid, sid := strings.TrimSpace(in.TaskID), strings.TrimSpace(in.ShellID)
	switch {
	case tid == "" && sid == "":
		return tool.Errorf("TaskStop: task_id is required"), nil
	case tid != "" && sid != "" && tid != sid:
		return tool.Errorf("TaskStop: task_id %q and shell_id %q differ; give only task_id", tid, sid), nil
	case tid == "":
		tid = sid
	}
	if t.reg == nil {
		return tool.Errorf("TaskStop: background tasks are not available in this session"), nil
	}
	id := resolve(t.reg, t.resolve, taskreg.ID(tid))
	s, err := t.reg.Stop(ctx, id)
	switch {
	case errors.Is(err, taskreg.ErrNotFound):
		return tool.Errorf("TaskStop: task_id %q: no such task; known tasks: %s", id, known(t.reg)), nil
	case errors.Is(err, taskreg.ErrNotRunning):
		return tool.Errorf("TaskStop: task %s is not running: it already ended (%s)", id, s.Status), nil
	case err != nil:
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		return tool.Errorf("TaskStop: could not stop task %s: %v", id, err), nil
	}
	out := stopOutput{TaskID: string(s.ID), TaskType: string(s.Type)}
	if sh, ok := s.Detail.(*taskreg.Shell); ok {
		out.Command = sh.Command
	}
	out.Message = "Successfully stopped task: " + string(s.ID)
	if s.Description != "" {
		out.Message += " (" + s.Description + ")"
	}
	b, _ := json.Marshal(out)
	return tool.Result{Content: string(b)}, nil
}
