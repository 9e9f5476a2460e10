package dashboard

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/mailbox"
)

// Describe says in words what a message means: a structured protocol frame
// becomes a sentence ("alice asks to run go test"); plain text is returned
// as is, with kind "". from is the sender's name, to the recipient's.
func Describe(from, to, text string) (kind, words string) {
	f, err := mailbox.Decode(text)
	if err != nil {
		return "malformed", fmt.Sprintf("%s sent a malformed protocol message (%v)", from, err)
	}
	switch f := f.(type) {
	case mailbox.Text:
		return "", string(f)
	case mailbox.IdleNotification:
		s := from + " is idle"
		switch f.IdleReason {
		case mailbox.IdleInterrupted:
			s = from + " was interrupted and is idle"
		case mailbox.IdleFailed:
			s = from + " failed and is idle"
		}
		if f.CompletedTaskID != "" {
			s += fmt.Sprintf(" after task #%s (%s)", f.CompletedTaskID, orWord(f.CompletedStatus, "done"))
		}
		if f.FailureReason != "" {
			s += ": " + f.FailureReason
		} else if f.Summary != "" {
			s += ": " + f.Summary
		}
		return f.Kind(), s
	case mailbox.ShutdownRequest:
		return f.Kind(), withReason(fmt.Sprintf("%s asks %s to shut down", from, to), f.Reason)
	case mailbox.ShutdownResponse:
		if f.Approve {
			return f.Kind(), from + " approved shutdown"
		}
		return f.Kind(), withReason(from+" rejected shutdown", f.Reason)
	case mailbox.ShutdownApproved:
		return f.Kind(), from + " approved shutdown"
	case mailbox.ShutdownRejected:
		return f.Kind(), withReason(from+" rejected shutdown", f.Reason)
	case mailbox.PlanApprovalRequest:
		return f.Kind(), fmt.Sprintf("%s asks %s to approve a plan:\n%s", from, to, f.PlanContent)
	case mailbox.PlanApprovalResponse:
		if f.Approved {
			return f.Kind(), withReason(fmt.Sprintf("%s approved %s's plan", from, to), f.Feedback)
		}
		return f.Kind(), withReason(fmt.Sprintf("%s rejected %s's plan", from, to), f.Feedback)
	case mailbox.PermissionRequest:
		if f.ToolName == ask.ToolName {
			in, _ := ask.Parse(f.Input)
			return f.Kind(), fmt.Sprintf("%s asks the person: %s", from, ask.Summary(in.Questions))
		}
		return f.Kind(), fmt.Sprintf("%s asks to %s", from, Action(f.ToolName, f.Input, f.Description))
	case mailbox.PermissionResponse:
		if f.Subtype == "success" && f.Response != nil {
			if a, ok := ask.AnswersOf(f.Response.UpdatedInput); ok && toolOf(f) == ask.ToolName {
				return f.Kind(), fmt.Sprintf("%s answered %s's questions: %s", from, to, answerList(a))
			}
		}
		if f.Subtype == "success" {
			always := ""
			if f.Response != nil && len(f.Response.PermissionUpdates) > 0 {
				always = " (always)"
			}
			return f.Kind(), fmt.Sprintf("%s allowed %s's %s call%s", from, to, toolOf(f), always)
		}
		return f.Kind(), withReason(fmt.Sprintf("%s denied %s's %s call", from, to, toolOf(f)), f.Error)
	case mailbox.TaskAssignment:
		return f.Kind(), fmt.Sprintf("%s assigned task #%s to %s: %s", orWord(f.AssignedBy, from), f.TaskID, to, f.Subject)
	case mailbox.TaskCompleted:
		return f.Kind(), strings.TrimSpace(fmt.Sprintf("%s completed task #%s %s", from, f.TaskID, f.TaskSubject))
	}
	return f.Kind(), text
}

// Action is a short phrase for a tool call: "run go test" for Bash, "edit
// main.go" for a file tool, else "use Tool" with the description.
func Action(tool string, input json.RawMessage, description string) string {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Path     string `json:"path"`
		Pattern  string `json:"pattern"`
		URL      string `json:"url"`
	}
	_ = json.Unmarshal(input, &in) // best effort: an odd input falls back to the tool name
	switch {
	case in.Command != "":
		return "run " + in.Command
	case in.FilePath != "" && (tool == "Write" || tool == "Edit" || tool == "MultiEdit" || tool == "NotebookEdit"):
		return strings.ToLower(strings.TrimPrefix(tool, "Multi")) + " " + in.FilePath
	case in.FilePath != "":
		return "use " + tool + " on " + in.FilePath
	case in.URL != "":
		return "fetch " + in.URL
	case in.Path != "":
		return "use " + tool + " on " + in.Path
	case in.Pattern != "":
		return "use " + tool + " for " + in.Pattern
	case description != "":
		return "use " + tool + " (" + description + ")"
	}
	return "use " + tool
}

func toolOf(f mailbox.PermissionResponse) string {
	if f.ApprovedRequest != nil && f.ApprovedRequest.ToolName != "" {
		return f.ApprovedRequest.ToolName
	}
	return "tool"
}

func withReason(s, reason string) string {
	if r := strings.TrimSpace(reason); r != "" {
		return s + ": " + r
	}
	return s
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// answerList is answers as "question: answer" pairs, sorted.
func answerList(a ask.Answers) string {
	parts := make([]string, 0, len(a))
	for q, v := range a {
		parts = append(parts, q+" → "+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}
