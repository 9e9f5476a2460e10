package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
)

// MaxOutput bounds what is kept of a hook's stdout and of its stderr.
const MaxOutput = 64 << 10

// Run is the record of one hook command's run, for the audit log.
type Run struct {
	Time       time.Time `json:"time"`
	Kind       string    `json:"kind"` // always "hook", to tell these lines from permission decisions
	Agent      string    `json:"agent,omitempty"`
	Event      Event     `json:"event"`
	Matcher    string    `json:"matcher,omitempty"`
	Command    string    `json:"command"`
	Source     string    `json:"source,omitempty"`
	Exit       int       `json:"exit"` // -1 when it did not exit (timeout, failed to start)
	DurationMS int64     `json:"duration_ms"`
	Decision   string    `json:"decision,omitempty"` // block, deny, ask, allow, warning
	Reason     string    `json:"reason,omitempty"`
}

// Outcome is the merged result of the hooks of one event.
type Outcome struct {
	// Block is set by an exit 2, a "decision": "block" or a PreToolUse
	// "deny"; Reason is what the model (or the person) is told.
	Block  bool
	Reason string
	// Permission is PreToolUse's merged permissionDecision, or
	// PermissionRequest's decision.behavior: deny beats ask beats allow;
	// "" when no hook gave one.
	Permission string
	// UpdatedInput replaces the tool input (PreToolUse), last hook wins.
	UpdatedInput json.RawMessage
	// Context is text for the model: additionalContext, and the plain
	// stdout of UserPromptSubmit and SessionStart hooks.
	Context string
	// Halt is set by "continue": false: the agent stops after this event;
	// HaltReason is for the person.
	Halt       bool
	HaltReason string
	// Warnings are for the person: non-blocking failures, each naming
	// its hook, and systemMessages.
	Warnings []string
	// Runs are the commands run.
	Runs []Run
}

// Runner runs hooks. Config may be nil (no hooks).
type Runner struct {
	Config *Config
	// Dir is the project folder: each command's working folder and its
	// $CLAUDE_PROJECT_DIR and $TROUPE_PROJECT_DIR.
	Dir string
	// Env is the commands' environment before those two; nil means
	// os.Environ().
	Env []string
	// Shell runs each command as Shell -c COMMAND; empty means /bin/sh.
	Shell string
	// Agent names whose hooks these are, for Run records.
	Agent string
	// Record, when set, is called once per command run (the audit log).
	Record func(Run)
	// Now stamps Run records; nil means time.Now.
	Now func() time.Time
}

// Active reports whether any hook is configured for ev. Callers use it to
// skip building an Input on the hot path.
func (r *Runner) Active(ev Event) bool { return r != nil && r.Config.Has(ev) }

// Run runs the hooks of in.HookEventName matching the event in parallel
// (identical commands once) and merges their results in configuration
// order. It returns when every command has ended or been killed.
func (r *Runner) Run(ctx context.Context, in Input) Outcome {
	if r == nil {
		return Outcome{}
	}
	matched := r.Config.Matching(in.HookEventName, in.matchValue())
	if len(matched) == 0 {
		return Outcome{}
	}
	var uniq []Hook
	seen := map[string]bool{}
	for _, h := range matched {
		if !seen[h.Command] {
			seen[h.Command] = true
			uniq = append(uniq, h)
		}
	}
	stdin, err := json.Marshal(in)
	if err != nil { // Input holds only strings and valid raw JSON
		return Outcome{Warnings: []string{fmt.Sprintf("%s hooks: %v", in.HookEventName, err)}}
	}
	results := make([]result, len(uniq))
	var wg sync.WaitGroup
	for i, h := range uniq {
		wg.Go(func() { results[i] = r.runOne(ctx, h, stdin) })
	}
	wg.Wait()
	var out Outcome
	for i, res := range results {
		run := merge(&out, in.HookEventName, uniq[i], res)
		out.Runs = append(out.Runs, run)
		if r.Record != nil {
			r.Record(run)
		}
	}
	return out
}

// result is what one command did.
type result struct {
	start          time.Time
	elapsed        time.Duration
	exit           int // -1: did not exit
	stdout, stderr []byte
	stdoutCut      bool  // stdout was longer than MaxOutput
	err            error // did not start, timed out, or was canceled
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) runOne(ctx context.Context, h Hook, stdin []byte) result {
	ctx, cancel := context.WithTimeoutCause(ctx, h.Timeout, fmt.Errorf("timed out after %s", h.Timeout))
	defer cancel()
	sh := r.Shell
	if sh == "" {
		sh = "/bin/sh"
	}
	cmd := exec.CommandContext(ctx, sh, "-c", h.Command)
	cmd.Dir = r.Dir
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], "CLAUDE_PROJECT_DIR="+r.Dir, "TROUPE_PROJECT_DIR="+r.Dir)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// In a group of its own: a timeout, and the hook's end, kill all of it.
	procgroup.Set(cmd)
	cmd.Cancel = func() error { return procgroup.Kill(cmd) }
	cmd.WaitDelay = time.Second // a grandchild holding the pipes cannot stall us
	res := result{start: r.now(), exit: -1}
	t0 := time.Now()
	err := cmd.Start()
	if err == nil {
		procgroup.Started(cmd) // the process's ledger: killed even if we die
		err = cmd.Wait()
	}
	_ = procgroup.Kill(cmd) // a background child it left would hold its pipes
	res.elapsed = time.Since(t0)
	res.stdout, res.stderr, res.stdoutCut = stdout.b.Bytes(), stderr.b.Bytes(), stdout.cut
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.err = context.Cause(ctx)
	case err == nil,
		// Exited 0, but a background child it started held the pipes past
		// WaitDelay: what it wrote is its answer (a deny dropped here
		// would let the call through).
		errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 0:
		res.exit = 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		res.exit = exit.ExitCode()
	default:
		res.err = err
	}
	return res
}

// capped is a writer keeping the first MaxOutput bytes; cut says more
// came.
type capped struct {
	b   bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := MaxOutput - c.b.Len()
	if len(p) > room {
		c.cut = true
	}
	if room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// blockable reports whether an event's hooks can block what it is about;
// an exit 2 of the others is a warning for the person.
func blockable(ev Event) bool {
	switch ev {
	case SessionStart, SessionEnd, PreCompact, Notification:
		return false
	}
	return true
}

// plainContext are the events whose plain stdout on exit 0 goes to the
// model as context.
func plainContext(ev Event) bool { return ev == UserPromptSubmit || ev == SessionStart }

// merge folds one command's result into out and returns its record.
func merge(out *Outcome, ev Event, h Hook, res result) Run {
	run := Run{Time: res.start, Kind: "hook", Event: ev, Matcher: h.Matcher, Command: h.Command, Source: h.Source,
		Exit: res.exit, DurationMS: res.elapsed.Milliseconds()}
	name := fmt.Sprintf("%s hook %q (%s)", ev, short(h.Command), h.Source)
	warn := func(format string, args ...any) {
		msg := name + ": " + fmt.Sprintf(format, args...)
		out.Warnings = append(out.Warnings, msg)
		run.Decision, run.Reason = "warning", msg
	}
	stderr := strings.TrimSpace(string(res.stderr))
	switch {
	case res.err != nil:
		warn("%v", res.err)
		return run
	case res.exit == 2 && !blockable(ev):
		warn("exit status 2 (this event cannot be blocked): %s", cut(stderr))
		return run
	case res.exit == 2:
		reason := stderr
		if reason == "" {
			reason = name + " blocked this without a reason"
		}
		block(out, reason)
		run.Decision, run.Reason = "block", reason
		return run
	case res.exit != 0:
		warn("exit status %d: %s", res.exit, cut(stderr))
		return run
	}
	if res.stdoutCut {
		if ev == PreToolUse || ev == PermissionRequest {
			// Its decision cannot be read whole; it may be a deny.
			reason := fmt.Sprintf("%s wrote more than %d bytes, so its decision could not be read: the call is blocked", name, MaxOutput)
			block(out, reason)
			run.Decision, run.Reason = "block", reason
			return run
		}
		warn("wrote more than %d bytes to stdout; only the first %d were read", MaxOutput, MaxOutput)
	}
	o, isJSON, err := ParseOutput(res.stdout)
	if err != nil {
		warn("%v", err)
		return run
	}
	if !isJSON {
		if text := strings.TrimSpace(string(res.stdout)); text != "" && plainContext(ev) {
			addContext(out, text)
		}
		return run
	}
	if o.SystemMessage != "" {
		out.Warnings = append(out.Warnings, name+": "+o.SystemMessage)
	}
	if o.Continue != nil && !*o.Continue {
		out.Halt = true
		if out.HaltReason == "" {
			out.HaltReason = o.StopReason
		}
		run.Decision, run.Reason = "stop", o.StopReason
	}
	if o.Decision == "approve" && ev == PreToolUse && rank(out.Permission) < rank("allow") { // Claude Code's deprecated form of allow
		out.Permission = "allow"
	}
	if o.Decision == "block" && blockable(ev) {
		reason := o.Reason
		if reason == "" {
			reason = name + " blocked this without a reason"
		}
		block(out, reason)
		run.Decision, run.Reason = "block", reason
	}
	if sp := o.Specific; sp != nil {
		if sp.AdditionalContext != "" {
			addContext(out, sp.AdditionalContext)
		}
		if ev == PreToolUse && sp.PermissionDecision != "" {
			d := sp.PermissionDecision
			if rank(d) > rank(out.Permission) {
				out.Permission = d
			}
			run.Decision, run.Reason = d, sp.PermissionDecisionReason
			if d == "deny" {
				reason := sp.PermissionDecisionReason
				if reason == "" {
					reason = name + " denied this without a reason"
				}
				block(out, reason)
			} else if sp.PermissionDecisionReason != "" && d == "ask" {
				out.Reason = joinLine(out.Reason, sp.PermissionDecisionReason)
			}
		}
		if pa := sp.Decision; ev == PermissionRequest && pa != nil {
			if rank(pa.Behavior) > rank(out.Permission) {
				out.Permission = pa.Behavior
			}
			run.Decision, run.Reason = pa.Behavior, pa.Message
			if pa.Behavior == "deny" {
				reason := pa.Message
				if reason == "" {
					reason = name + " denied this without a reason"
				}
				block(out, reason)
			} else if pa.UpdatedInput != nil {
				out.UpdatedInput = pa.UpdatedInput
			}
		}
		if ev == PreToolUse && sp.UpdatedInput != nil && sp.PermissionDecision != "deny" {
			out.UpdatedInput = sp.UpdatedInput
			if run.Decision == "" {
				run.Decision = "rewrite"
			}
		}
	}
	return run
}

func rank(d string) int {
	switch d {
	case "deny":
		return 3
	case "ask":
		return 2
	case "allow":
		return 1
	}
	return 0
}

func block(out *Outcome, reason string) {
	if !out.Block {
		out.Reason = ""
	}
	out.Block = true
	out.Reason = joinLine(out.Reason, reason)
}

func addContext(out *Outcome, text string) { out.Context = joinLine(out.Context, text) }

func joinLine(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// short cuts a command for messages.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 72 {
		return s[:30] + "..." + s[len(s)-39:] // the head says what runs, the tail which script
	}
	return s
}

func cut(s string) string {
	if len(s) > 500 {
		return s[:497] + "..."
	}
	if s == "" {
		return "(no stderr)"
	}
	return s
}
