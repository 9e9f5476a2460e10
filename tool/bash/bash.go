// Package bash provides the Bash tool, which runs a shell command for the
// model and returns its combined output and exit code.
//
// Each call runs `<shell> -c <command>` in a new process group, in
// Config.Dir, with Config.Env and stdin from /dev/null. Calls are
// independent: a cd or an export in one call does not carry over to the
// next. When the command finishes, times out or its context ends, every
// process left in its group is terminated (SIGTERM, then SIGKILL after
// Config.KillGrace), so that no process outlives the call; a process that
// leaves the group on purpose (setsid, a double fork into a new session)
// is beyond its reach.
//
// A call with run_in_background: true is refused unless Config.Background
// is set; then it starts the command as a background task through it (see
// tool/tasktool.BashBackground) and returns at once with the task's id and
// output file.
//
// Stdout and stderr share one pipe, so the output interleaves as it was
// written. It is kept whole up to Config.MaxOutput bytes; beyond that its
// head and tail are kept and the middle is replaced by a note.
//
// A Tool is safe for concurrent use; it keeps no state between calls.
package bash

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// Defaults for Config.
const (
	DefaultTimeout    = 2 * time.Minute
	DefaultMaxTimeout = 10 * time.Minute
	DefaultMaxOutput  = 30000
	DefaultKillGrace  = 2 * time.Second
)

// Config configures the Bash tool.
type Config struct {
	// Dir is the working directory of every command; empty means the
	// process's working directory.
	Dir string
	// Env is the environment of every command, as "KEY=value" strings;
	// nil means the process's environment.
	Env []string
	// DefaultTimeout applies when a call gives none; 0 means
	// DefaultTimeout.
	DefaultTimeout time.Duration
	// MaxTimeout caps the timeout a call may ask for; 0 means
	// DefaultMaxTimeout.
	MaxTimeout time.Duration
	// MaxOutput bounds the output returned, in bytes; 0 means
	// DefaultMaxOutput.
	MaxOutput int
	// Shell runs the command with -c; empty means bash if it is on PATH,
	// else sh.
	Shell string
	// KillGrace is how long the processes of a command that timed out or
	// was canceled get between SIGTERM and SIGKILL; 0 means
	// DefaultKillGrace.
	KillGrace time.Duration
	// Background, when set, starts a call with run_in_background: true as
	// a background task and returns at once with the task's id and output
	// file; unset, such a call is refused and runs nothing. The task
	// registry's wiring helper (tool/tasktool.BashBackground) provides one.
	Background BackgroundFunc
}

// BackgroundFunc starts command as a background shell task. description
// is the call's description (the command when the model gave none) and
// toolUseID the id of the tool_use block that asked for it. It returns the
// task id and the path of the file its output goes to.
type BackgroundFunc func(ctx context.Context, command, description, toolUseID string) (taskID, outputFile string, err error)

// withDefaults returns c with its zero fields filled.
func (c Config) withDefaults() Config {
	if c.Dir == "" {
		c.Dir, _ = os.Getwd()
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = DefaultTimeout
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	c.DefaultTimeout = min(c.DefaultTimeout, c.MaxTimeout)
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.Shell == "" {
		c.Shell = "sh"
		if p, err := exec.LookPath("bash"); err == nil {
			c.Shell = p
		}
	}
	if c.KillGrace <= 0 {
		c.KillGrace = DefaultKillGrace
	}
	return c
}

//go:embed bash.md
var description string

const schema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command to execute"},
    "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max {{max_ms}})"},
    "description": {"type": "string", "description": "Clear, concise description of what this command does in 5-10 words"},
    "run_in_background": {"type": "boolean", "description": "{{background_schema}}"}
  },
  "required": ["command"],
  "additionalProperties": false
}`

// Tool is the Bash tool.
type Tool struct {
	cfg  Config
	spec llm.ToolSpec
}

var _ tool.Tool = (*Tool)(nil)

// New returns the Bash tool.
func New(cfg Config) *Tool {
	cfg = cfg.withDefaults()
	r := strings.NewReplacer(
		"{{max_ms}}", fmt.Sprint(cfg.MaxTimeout.Milliseconds()),
		"{{max_timeout}}", cfg.MaxTimeout.String(),
		"{{default_ms}}", fmt.Sprint(cfg.DefaultTimeout.Milliseconds()),
		"{{default_timeout}}", cfg.DefaultTimeout.String(),
		"{{max_output}}", fmt.Sprint(cfg.MaxOutput),
		"{{background_schema}}", backgroundSchema(cfg.Background != nil),
		"{{background}}", backgroundDoc(cfg.Background != nil),
	)
	return &Tool{cfg: cfg, spec: llm.ToolSpec{
		Name:        "Bash",
		Description: r.Replace(description),
		InputSchema: json.RawMessage(r.Replace(schema)),
	}}
}

type input struct {
	Command         string   `json:"command"`
	Timeout         *float64 `json:"timeout"`
	Description     string   `json:"description"`
	RunInBackground bool     `json:"run_in_background"`
}

// Spec implements tool.Tool.
func (t *Tool) Spec() llm.ToolSpec { return t.spec }

// ReadOnly implements tool.Tool. A command may change anything, so no call
// counts as read-only here; the permission layer decides which commands
// are harmless.
func (*Tool) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool. It returns a Go error only when ctx ends
// (after killing the command's processes), with the output so far in the
// Result.
func (t *Tool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in input
	if res, ok := tool.Decode("Bash", call.Input, &in); !ok {
		return res, nil
	}
	if strings.TrimSpace(in.Command) == "" {
		return tool.Errorf("Bash: command is required"), nil
	}
	if in.RunInBackground && t.cfg.Background != nil {
		return t.background(ctx, call.ID, in)
	}
	if in.RunInBackground {
		return tool.Errorf("Bash: run_in_background is not available yet: background shells are not supported in this version, so the command was NOT run. Run it in the foreground instead, with a timeout of up to %d ms.",
			t.cfg.MaxTimeout.Milliseconds()), nil
	}
	timeout := t.cfg.DefaultTimeout
	var note string
	if in.Timeout != nil {
		ms := *in.Timeout
		switch {
		case ms < 0:
			return tool.Errorf("Bash: timeout must be a positive number of milliseconds, got %v", ms), nil
		case ms == 0:
		case ms > float64(t.cfg.MaxTimeout.Milliseconds()):
			timeout = t.cfg.MaxTimeout
			note = fmt.Sprintf("[The timeout of %v ms was lowered to the maximum, %d ms.]\n", ms, t.cfg.MaxTimeout.Milliseconds())
		default:
			timeout = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	res, err := t.run(ctx, in.Command, timeout)
	if note != "" {
		res.Content = note + res.Content
	}
	return res, err
}

// backgroundSchema is the schema text of run_in_background.
func backgroundSchema(on bool) string {
	if on {
		return "Set to true to run this command in the background; use TaskOutput to read its output later"
	}
	return "Not available yet: a call that sets it to true is refused and runs nothing"
}

// backgroundDoc is the description's sentence about run_in_background.
func backgroundDoc(on bool) string {
	if on {
		return "With run_in_background: true the command starts as a background task and the call returns at once with its task id and output file; it keeps running after the call (timeout does not apply), you are notified when it ends, TaskOutput reads its output (block: true waits for it to finish) and TaskStop stops it. Use it for long-running commands (servers, watchers, long builds) whose result you do not need right away; you do not need to append `&`."
	}
	return "run_in_background is not available yet; a call with it set to true is refused and runs nothing."
}

// background starts in.Command through Config.Background.
func (t *Tool) background(ctx context.Context, toolUseID string, in input) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	desc := strings.TrimSpace(in.Description)
	if desc == "" {
		desc = in.Command
	}
	id, file, err := t.cfg.Background(ctx, in.Command, desc, toolUseID)
	if err != nil {
		msg := fmt.Sprintf("Bash: could not start the command in the background: %v", err)
		if id != "" {
			msg += fmt.Sprintf(" (task %s)", id)
		}
		return tool.Errorf("%s", msg), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Command running in background with ID: %s.", id)
	if file != "" {
		fmt.Fprintf(&b, " Output is being written to: %s.", file)
	}
	fmt.Fprintf(&b, " You will be notified when it finishes. Use TaskOutput with task_id %q to read its output (block: true waits for it to finish) and TaskStop to stop it.", id)
	if in.Timeout != nil {
		b.WriteString(" (The timeout does not apply to a background command.)")
	}
	return tool.Result{Content: b.String()}, nil
}
