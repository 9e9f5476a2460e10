package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/internal/realpath"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/audit"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/swarm"
)

// cliArgSource is the Source of the rules given by --allowedTools and
// --disallowedTools.
const cliArgSource = "cliArg"

// headlessApprover builds the permission layer of `troupe -p` from the
// settings files and the flags. It runs before the model is opened, so a
// malformed settings file stops the run before any model call. The
// returned function closes the audit log.
func (a *app) headlessApprover(h *headless, cwd string) (*approve.Approver, func(), error) {
	nop := func() {}
	home, err := a.home()
	if err != nil {
		return nil, nop, err
	}
	userHome, err := a.HomeDir()
	if err != nil {
		userHome = "" // rules under ~/ then never allow
	}
	s, err := settings.Load(settings.Files(home, cwd), userHome)
	if err != nil {
		return nil, nop, fmt.Errorf("permission settings: %w", err)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.Stderr, "troupe: warning: %s\n", w)
	}
	mode := s.DefaultMode
	if h.permissionMode != "" {
		if mode, err = permission.ParseMode(h.permissionMode); err != nil {
			return nil, nop, usagef("--permission-mode: %v", err)
		}
	}
	if mode == "" {
		mode = permission.ModeDefault
	}
	p := s.Policy()
	p.Home, p.Shell, p.Realpath = userHome, shell.Parse, realpath.Resolve
	p.Protected = []string{home} // troupe's settings, teams, mailboxes and task lists: a run never rewrites them
	for _, l := range []struct {
		flag  string
		texts []string
		into  *[]permission.Rule
	}{{"--allowedTools", h.allowedTools, &p.Allow}, {"--disallowedTools", h.disallowedTools, &p.Deny}} {
		for _, text := range l.texts {
			for _, rs := range permission.SplitRules(text) {
				r, err := permission.ParseRule(rs)
				if err != nil {
					return nil, nop, usagef("%s: %v", l.flag, err)
				}
				r.Source, r.Base = cliArgSource, cwd
				*l.into = append(*l.into, r)
			}
		}
	}
	// Loading a skill (the Skill tool) only reads its file; a deny or ask
	// rule for Skill still wins over this.
	p.Allow = append(p.Allow, permission.Rule{Tool: "Skill", Source: "built-in (loading a skill only reads it)"})
	dirs := append([]string(nil), s.Dirs...)
	for _, d := range h.addDirs {
		abs := d
		if !filepath.IsAbs(d) {
			wd, err := a.Getwd()
			if err != nil {
				return nil, nop, err
			}
			abs = filepath.Join(wd, d)
		}
		abs = filepath.Clean(abs)
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, nop, usagef("--add-dir %s: not a folder", d)
		}
		dirs = append(dirs, abs)
	}
	if h.promptTimeout <= 0 {
		return nil, nop, usagef("--permission-prompt-timeout %s: want a positive duration", h.promptTimeout)
	}
	ap := &approve.Approver{Policy: p, Agent: "troupe", Cwd: cwd, Dirs: dirs, Mode: mode, Now: a.Now, Hint: approve.HeadlessHint(p, cwd, dirs)}
	if strings.TrimSpace(h.promptCommand) != "" {
		ap.Asker = &promptCommand{command: h.promptCommand, timeout: h.promptTimeout}
	}
	if h.audit != "" {
		log, err := audit.Open(h.audit, a.Now)
		if err != nil {
			return nil, nop, fmt.Errorf("--audit: %w", err)
		}
		ap.Audit = log
		return ap, func() { log.Close() }, nil
	}
	return ap, nop, nil
}

// promptCommand answers permission questions with an external program:
// `sh -c COMMAND`, the request as one JSON object on its stdin, the answer
// as one JSON object on its stdout.
type promptCommand struct {
	command string
	timeout time.Duration
}

// promptRequest is what --permission-prompt-command reads on stdin.
type promptRequest struct {
	// Agent is the teammate asking, when a team lead relays the question.
	Agent     string          `json:"agent,omitempty"`
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Reason    string          `json:"reason"`
	Mode      permission.Mode `json:"mode"`
	Cwd       string          `json:"cwd"`
}

// promptAnswer is what it prints on stdout.
type promptAnswer struct {
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

// Ask implements approve.Asker. A timeout, a failure or an unreadable
// answer is an error saying so; the approver turns it into a denial the
// model sees.
func (pc *promptCommand) Ask(ctx context.Context, r approve.AskRequest) (approve.Answer, error) {
	ans, err := pc.ask(ctx, promptRequest{ToolName: r.Tool, Input: r.Input, ToolUseID: r.ToolUseID, Reason: r.Reason, Mode: r.Mode, Cwd: r.Cwd})
	if err != nil {
		return approve.Answer{}, err
	}
	return approve.Answer{Allow: ans.Behavior == "allow", Message: ans.Message, UpdatedInput: ans.UpdatedInput}, nil
}

// ask runs the command on one question and returns its checked answer.
func (pc *promptCommand) ask(ctx context.Context, req promptRequest) (promptAnswer, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return promptAnswer{}, fmt.Errorf("permission prompt command: encode the request: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, pc.timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "sh", "-c", pc.command)
	cmd.Dir = req.Cwd
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limitWriter{w: &stdout, n: maxPromptOutput}
	cmd.Stderr = &limitWriter{w: &stderr, n: 4096}
	// Children of sh that keep the pipes open do not hold Wait up.
	cmd.WaitDelay = 500 * time.Millisecond
	runErr := cmd.Run()
	if err := ctx.Err(); err != nil {
		return promptAnswer{}, err
	}
	if cctx.Err() == context.DeadlineExceeded {
		return promptAnswer{}, fmt.Errorf("permission prompt command %q timed out after %s (--permission-prompt-timeout)", pc.command, pc.timeout)
	}
	if runErr != nil {
		msg := fmt.Sprintf("permission prompt command %q failed: %v", pc.command, runErr)
		if e := strings.TrimSpace(stderr.String()); e != "" {
			msg += ": " + e
		}
		return promptAnswer{}, errors.New(msg)
	}
	out := bytes.TrimSpace(stdout.Bytes())
	var ans promptAnswer
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&ans); err != nil || dec.More() {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return promptAnswer{}, fmt.Errorf("permission prompt command %q printed no valid answer (%v): %q; want {\"behavior\":\"allow\"|\"deny\",\"message\":\"...\"}", pc.command, err, truncate(string(out), 200))
	}
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
				return promptAnswer{}, fmt.Errorf("permission prompt command %q answered rule %q: %v", pc.command, ans.Rule, err)
			}
		}
		return ans, nil
	case "deny":
		if ans.Message == "" {
			ans.Message = "denied by the permission prompt command"
		}
		return ans, nil
	}
	return promptAnswer{}, fmt.Errorf("permission prompt command %q answered behavior %q; want \"allow\" or \"deny\"", pc.command, ans.Behavior)
}

// teamAnswer answers a teammate's question relayed to a headless lead:
// allow, allow always (the whole team, "always": true and an optional
// "rule"), or deny with a message.
func (pc *promptCommand) teamAnswer(ctx context.Context, q swarm.PermissionAsk, cwd string) (swarm.PermissionAnswer, error) {
	ans, err := pc.ask(ctx, promptRequest{Agent: q.Worker, ToolName: q.Tool, Input: q.Input, ToolUseID: q.ToolUseID, Reason: q.Description, Cwd: cwd})
	if err != nil {
		return swarm.PermissionAnswer{}, err
	}
	allow := ans.Behavior == "allow"
	return swarm.PermissionAnswer{Allow: allow, Always: allow && ans.Always, Rule: ans.Rule, Message: ans.Message}, nil
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
