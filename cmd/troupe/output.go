package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/mailbox"
)

// printJSON writes v to stdout as one indented JSON document.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table returns a tabwriter on stdout for aligned columns; the caller
// flushes it.
func (a *app) table() *tabwriter.Writer {
	return tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
}

// row writes one table row, with tabs and newlines in the cells flattened.
func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = cell(c)
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// cell makes s fit in one table cell, with its control characters shown
// as escapes (stored text is untrusted); an empty cell reads "-".
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return termtext.Line(strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ").Replace(s))
}

// localTime formats t in local time; the zero time reads "-".
func localTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// epochTime formats a stored epoch-millisecond time in local time.
func epochTime(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return localTime(time.UnixMilli(ms))
}

// messageText renders a message's text for people: plain text as it is,
// a protocol frame as its kind and key fields, such as
// "[shutdown_request] from=team-lead reason=done".
func messageText(text string) string {
	f, err := mailbox.Decode(text)
	if err != nil {
		return text // a malformed frame: show what is stored
	}
	if t, ok := f.(mailbox.Text); ok {
		return string(t)
	}
	return frameLine(f)
}

// frameLine returns "[kind] key=value ..." with the key fields of f.
func frameLine(f mailbox.Frame) string {
	var kv []string
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k+"="+quoteIfNeeded(v))
		}
	}
	switch f := f.(type) {
	case mailbox.IdleNotification:
		add("from", f.From)
		add("reason", f.IdleReason)
		add("summary", f.Summary)
		add("task", f.CompletedTaskID)
		add("status", f.CompletedStatus)
		add("failure", f.FailureReason)
	case mailbox.ShutdownRequest:
		add("from", f.From)
		add("reason", f.Reason)
		add("request", f.RequestID)
	case mailbox.ShutdownResponse:
		add("request", f.RequestID)
		add("approve", strconv.FormatBool(f.Approve))
		add("reason", f.Reason)
	case mailbox.ShutdownApproved:
		add("from", f.From)
		add("request", f.RequestID)
	case mailbox.ShutdownRejected:
		add("from", f.From)
		add("reason", f.Reason)
		add("request", f.RequestID)
	case mailbox.PlanApprovalRequest:
		add("from", f.From)
		add("request", f.RequestID)
		add("plan", firstLine(f.PlanContent, 60))
	case mailbox.PlanApprovalResponse:
		add("request", f.RequestID)
		add("approved", strconv.FormatBool(f.Approved))
		add("feedback", f.Feedback)
	case mailbox.PermissionRequest:
		add("agent", f.AgentID)
		add("tool", f.ToolName)
		add("description", f.Description)
		add("request", f.RequestID)
	case mailbox.PermissionResponse:
		add("request", f.RequestID)
		add("result", f.Subtype)
		add("error", f.Error)
	case mailbox.TaskAssignment:
		add("task", f.TaskID)
		add("subject", f.Subject)
		add("by", f.AssignedBy)
	case mailbox.TaskCompleted:
		add("from", f.From)
		add("task", f.TaskID)
		add("subject", f.TaskSubject)
	}
	if len(kv) == 0 {
		return "[" + f.Kind() + "]"
	}
	return "[" + f.Kind() + "] " + strings.Join(kv, " ")
}

func quoteIfNeeded(s string) string {
	if strings.ContainsAny(s, " \t\r\n\"=") || !strconv.IsPrint(firstRune(s)) {
		return strconv.Quote(s)
	}
	return s
}

func firstRune(s string) rune {
	for _, r := range s {
		return r
	}
	return ' '
}

// firstLine returns the first line of s, cut to n runes.
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	if cut {
		return s + "..."
	}
	return s
}

// metadataLines returns "key=value" for each metadata key, sorted.
func metadataLines(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + string(m[k])
	}
	return out
}

// ids joins task ids for display.
func ids(list []string) string { return strings.Join(list, ",") }
