package approve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/permission"
)

// Command answers permission questions with an external program, the
// user's --permission-prompt-command: `sh -c COMMAND`, the request as one
// JSON object on its stdin, the answer as one JSON object on its stdout.
type Command struct {
	Shell   string        // run as sh -c Shell, in the asking agent's folder
	Timeout time.Duration // for one answer
}

// CommandRequest is what the command reads on stdin.
type CommandRequest struct {
	// Kind is "permission" (a tool call to allow or deny) or "question"
	// (an AskUserQuestion call to answer, docs/ask.md).
	Kind string `json:"kind"`
	// Agent is the teammate asking, when a team lead relays the question.
	Agent     string          `json:"agent,omitempty"`
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Reason    string          `json:"reason"`
	Mode      permission.Mode `json:"mode"`
	Cwd       string          `json:"cwd"`
}

// CommandAnswer is what it prints on stdout.
type CommandAnswer struct {
	Behavior     string          `json:"behavior"`
	Message      string          `json:"message"`
	UpdatedInput json.RawMessage `json:"updated_input"`
	// UpdatedInputCamel is Claude Code's spelling, accepted too.
	UpdatedInputCamel json.RawMessage `json:"updatedInput"`
	// Always (with allow) answers a teammate's question for the whole
	// team: Rule, or the rule that allows exactly this call, is added.
	Always bool   `json:"always"`
	Rule   string `json:"rule"`
}

// maxPromptOutput bounds what the prompt command may print.
const maxPromptOutput = 1 << 20

// Ask implements Asker. A timeout, a failure or an unreadable
// answer is an error saying so; the approver turns it into a denial the
// model sees.
func (pc *Command) Ask(ctx context.Context, r AskRequest) (Answer, error) {
	ans, err := pc.Decide(ctx, CommandRequest{ToolName: r.Tool, Input: r.Input, ToolUseID: r.ToolUseID, Reason: r.Reason, Mode: r.Mode, Cwd: r.Cwd})
	if err != nil {
		return Answer{}, err
	}
	return Answer{Allow: ans.Behavior == "allow", Message: ans.Message, UpdatedInput: ans.UpdatedInput}, nil
}

// Decide runs the command on one question and returns its checked answer.
func (pc *Command) Decide(ctx context.Context, req CommandRequest) (CommandAnswer, error) {
	if req.Kind == "" {
		req.Kind = KindPermission
	}
	out, err := pc.run(ctx, req)
	if err != nil {
		return CommandAnswer{}, err
	}
	var ans CommandAnswer
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&ans); err != nil || dec.More() {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return CommandAnswer{}, fmt.Errorf("permission prompt command %q printed no valid answer (%v): %q; want {\"behavior\":\"allow\"|\"deny\",\"message\":\"...\"}", pc.Shell, err, truncate(string(out), 200))
	}
	return pc.check(ans)
}

// Kinds of CommandRequest.
const (
	KindPermission = "permission"
	KindQuestion   = "question"
)

// run runs the command on one request and returns what it printed,
// trimmed.
func (pc *Command) run(ctx context.Context, req CommandRequest) ([]byte, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("permission prompt command: encode the request: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, pc.Timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "sh", "-c", pc.Shell)
	cmd.Dir = req.Cwd
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limitWriter{w: &stdout, n: maxPromptOutput}
	cmd.Stderr = &limitWriter{w: &stderr, n: 4096}
	// Children of sh that keep the pipes open do not hold Wait up.
	cmd.WaitDelay = 500 * time.Millisecond
	runErr := cmd.Run()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("permission prompt command %q timed out after %s (--permission-prompt-timeout)", pc.Shell, pc.Timeout)
	}
	if runErr != nil {
		msg := fmt.Sprintf("permission prompt command %q failed: %v", pc.Shell, runErr)
		if e := strings.TrimSpace(stderr.String()); e != "" {
			msg += ": " + e
		}
		return nil, errors.New(msg)
	}
	return bytes.TrimSpace(stdout.Bytes()), nil
}

// check checks a permission answer.
func (pc *Command) check(ans CommandAnswer) (CommandAnswer, error) {
	switch ans.Behavior {
	case "allow":
		if len(ans.UpdatedInput) == 0 {
			ans.UpdatedInput = ans.UpdatedInputCamel
		}
		if string(ans.UpdatedInput) == "null" {
			ans.UpdatedInput = nil
		}
		if ans.Rule != "" {
			if _, err := permission.ParseRule(ans.Rule); err != nil {
				return CommandAnswer{}, fmt.Errorf("permission prompt command %q answered rule %q: %v", pc.Shell, ans.Rule, err)
			}
		}
		return ans, nil
	case "deny":
		if ans.Message == "" {
			ans.Message = "denied by the permission prompt command"
		}
		return ans, nil
	}
	return CommandAnswer{}, fmt.Errorf("permission prompt command %q answered behavior %q; want \"allow\" or \"deny\"", pc.Shell, ans.Behavior)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// limitWriter keeps the first n bytes written and discards the rest.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
