package task

import (
	"fmt"
	"strconv"
	"strings"
)

func fmtErr(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

// Notification is a <task-notification> for the model. Empty fields are
// left out; Usage only when set.
type Notification struct {
	TaskID     ID
	ToolUseID  string
	Type       Type
	OutputFile string
	Status     string // completed, failed, killed; "" for a running task
	Summary    string
	OutputTail string // the end of a shell's output
	Note       string
	Result     string
	Usage      *Usage
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// XML renders n in docs/protocol.md section 11 order: task-id, tool-use-id,
// task-type, output-file, status, summary, then output-tail, note, result
// and usage.
// Text is XML-escaped (&, < and >; quotes stay as they are).
func (n Notification) XML() string {
	var b strings.Builder
	b.WriteString("<task-notification>\n")
	el := func(tag, v string) {
		if v == "" {
			return
		}
		b.WriteString("<" + tag + ">")
		xmlEscaper.WriteString(&b, v)
		b.WriteString("</" + tag + ">\n")
	}
	el("task-id", string(n.TaskID))
	el("tool-use-id", n.ToolUseID)
	el("task-type", string(n.Type))
	el("output-file", n.OutputFile)
	el("status", n.Status)
	el("summary", n.Summary)
	el("output-tail", n.OutputTail)
	el("note", n.Note)
	el("result", n.Result)
	if u := n.Usage; u != nil {
		b.WriteString("<usage><total_tokens>" + strconv.FormatInt(u.TotalTokens, 10) +
			"</total_tokens><tool_uses>" + strconv.Itoa(u.ToolUses) +
			"</tool_uses><duration_ms>" + strconv.FormatInt(u.Duration.Milliseconds(), 10) +
			"</duration_ms></usage>\n")
	}
	b.WriteString("</task-notification>")
	return b.String()
}

// Summary returns the human-readable one-line outcome of a terminal task.
// It is a pure function.
func Summary(s State) string {
	switch d := s.Detail.(type) {
	case *Shell:
		switch {
		case s.Status == Completed:
			return fmt.Sprintf("Background command %q completed (exit code %d)", s.Description, d.ExitCode)
		case s.Status == Failed && d.Exited:
			return fmt.Sprintf("Background command %q failed with exit code %d", s.Description, d.ExitCode)
		case s.Status == Failed:
			return fmt.Sprintf("Background command %q failed to start", s.Description)
		case s.Status == Killed:
			return fmt.Sprintf("Background command %q was stopped", s.Description)
		}
	case *Agent:
		switch s.Status {
		case Completed:
			return fmt.Sprintf("Agent %q finished", s.Description)
		case Failed:
			return fmt.Sprintf("Agent %q failed: %s", s.Description, d.Error)
		case Killed:
			return fmt.Sprintf("Agent %q was stopped", s.Description)
		}
	case *Monitor:
		return monitorSummary(s, d)
	case *Workflow:
		switch s.Status {
		case Completed:
			return fmt.Sprintf("Workflow %q (%s) completed", s.Description, d.RunID)
		case Failed:
			return fmt.Sprintf("Workflow %q (%s) failed: %s", s.Description, d.RunID, d.Error)
		case Killed:
			return fmt.Sprintf("Workflow %q (%s) was stopped", s.Description, d.RunID)
		}
	case *Remote:
		switch s.Status {
		case Completed:
			return fmt.Sprintf("Remote agent %q finished on worker %s", s.Description, d.Worker)
		case Failed:
			return fmt.Sprintf("Remote agent %q failed: %s", s.Description, d.Error)
		}
	}
	switch s.Status {
	case Completed:
		return fmt.Sprintf("Task %q completed successfully", s.Description)
	case Failed:
		return fmt.Sprintf("Task %q failed", s.Description)
	case Killed:
		return fmt.Sprintf("Task %q was stopped", s.Description)
	}
	return fmt.Sprintf("Task %q is %s", s.Description, s.Status)
}

// NotificationFor returns the completion notification of s, a terminal
// task. It is a pure function.
func NotificationFor(s State) Notification {
	n := Notification{
		TaskID: s.ID, ToolUseID: s.ToolUseID, Type: s.Type, OutputFile: s.OutputFile,
		Status: string(s.Status), Summary: Summary(s),
	}
	switch d := s.Detail.(type) {
	case *Shell:
		n.OutputTail = d.Tail
	case *Monitor:
		n.OutputTail = d.Tail
	case *Agent:
		n.Result = d.Result
		u := d.Usage
		if u.Duration == 0 {
			u.Duration = s.Duration(s.End)
		}
		n.Usage = &u
	case *Teammate:
		u := d.Usage
		n.Usage = &u
	case *Workflow:
		n.Result = d.Result
		if len(n.Result) > WorkflowResultCap {
			n.Result = n.Result[:WorkflowResultCap] + "…"
			n.Note = fmt.Sprintf("The result was cut at %d bytes; the whole of it is at the end of %s (and in %s/result.json).", WorkflowResultCap, s.OutputFile, d.Dir)
		}
		if s.Status == Completed {
			n.Note += strings.TrimSpace(fmt.Sprintf(" Run id %s: to rerun it with changes, edit %s/script.js and call Workflow with scriptPath and resumeFromRunId %s (finished agent() calls are replayed from its journal).", d.RunID, d.Dir, d.RunID))
		} else if d.RunID != "" {
			n.Note += fmt.Sprintf(" Resume it with resumeFromRunId %s: agent() calls that finished are replayed from its journal.", d.RunID)
		}
		n.Note = strings.TrimSpace(n.Note)
		u := d.Usage
		n.Usage = &u
	case *Remote:
		n.Result = d.Result
		if n.Result == "" {
			n.Result = d.Error
		}
		u := d.Usage
		n.Usage = &u
	}
	return n
}

// WorkflowResultCap bounds the return value a workflow's notification
// carries.
const WorkflowResultCap = 8 << 10

// The bounds of a notification's output tail.
const (
	TailLines = 20
	TailBytes = 4 << 10
)

// NotificationTail returns the end of the output file at path for a
// notification: its last TailLines lines within TailBytes, NUL bytes
// dropped and invalid UTF-8 replaced, so that the model sees how a command
// ended without reading its output. "" when there is none (or no file).
func NotificationTail(path string) string {
	rd, err := ReadOutputTail(path, TailLines, TailBytes)
	if err != nil || len(rd.Data) == 0 {
		return ""
	}
	t := strings.ToValidUTF8(strings.ReplaceAll(string(rd.Data), "\x00", ""), "\uFFFD")
	t = strings.TrimRight(t, "\n")
	if strings.TrimSpace(t) == "" {
		return ""
	}
	if rd.Offset > rd.Start {
		t = "…\n" + t // there was more before
	}
	return t
}
