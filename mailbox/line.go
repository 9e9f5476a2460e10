package mailbox

import (
	"strconv"
	"strings"
)

// Line renders a message's text for people: plain text as it is,
// a protocol frame as its kind and key fields, such as
// "[shutdown_request] from=team-lead reason=done".
func Line(text string) string {
	f, err := Decode(text)
	if err != nil {
		return text // a malformed frame: show what is stored
	}
	if t, ok := f.(Text); ok {
		return string(t)
	}
	return frameLine(f)
}

// frameLine returns "[kind] key=value ..." with the key fields of f.
func frameLine(f Frame) string {
	var kv []string
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k+"="+quoteIfNeeded(v))
		}
	}
	switch f := f.(type) {
	case IdleNotification:
		add("from", f.From)
		add("reason", f.IdleReason)
		add("summary", f.Summary)
		add("task", f.CompletedTaskID)
		add("status", f.CompletedStatus)
		add("failure", f.FailureReason)
	case ShutdownRequest:
		add("from", f.From)
		add("reason", f.Reason)
		add("request", f.RequestID)
	case ShutdownResponse:
		add("request", f.RequestID)
		add("approve", strconv.FormatBool(f.Approve))
		add("reason", f.Reason)
	case ShutdownApproved:
		add("from", f.From)
		add("request", f.RequestID)
	case ShutdownRejected:
		add("from", f.From)
		add("reason", f.Reason)
		add("request", f.RequestID)
	case PlanApprovalRequest:
		add("from", f.From)
		add("request", f.RequestID)
		add("plan", firstLine(f.PlanContent, 60))
	case PlanApprovalResponse:
		add("request", f.RequestID)
		add("approved", strconv.FormatBool(f.Approved))
		add("feedback", f.Feedback)
	case PermissionRequest:
		add("agent", f.AgentID)
		add("tool", f.ToolName)
		add("description", f.Description)
		add("request", f.RequestID)
	case PermissionResponse:
		add("request", f.RequestID)
		add("result", f.Subtype)
		add("error", f.Error)
	case TaskAssignment:
		add("task", f.TaskID)
		add("subject", f.Subject)
		add("by", f.AssignedBy)
	case TaskCompleted:
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
