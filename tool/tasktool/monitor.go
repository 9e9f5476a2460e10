package tasktool

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/llm"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// MonitorName is the Monitor tool's name.
const MonitorName = "Monitor"

// Resources is the part of the MCP client a monitor of an MCP resource
// uses (mcp.Manager has it).
type Resources interface {
	// WatchResource subscribes to a resource: the channel receives after
	// each update; the function unsubscribes.
	WatchResource(ctx context.Context, server, uri string) (<-chan struct{}, func(), error)
	ReadResourceText(ctx context.Context, server, uri string) (string, error)
}

// MonitorConfig configures the Monitor tool.
type MonitorConfig struct {
	Registry *taskreg.Registry
	// AgentID is the agent whose tool it is ("" for the lead): its
	// monitors end with it (Registry.KillForAgent).
	AgentID string
	Dir     string   // the commands' working folder and the base of relative files
	Env     []string // the commands' environment; nil inherits
	// Resources, when set, lets a monitor follow an MCP resource.
	Resources Resources
}

// Monitor is the Monitor tool: it starts a monitor_mcp task that watches a
// source and wakes the agent with the lines that match.
type Monitor struct{ cfg MonitorConfig }

var _ tool.Tool = (*Monitor)(nil)

// NewMonitor returns the Monitor tool.
func NewMonitor(cfg MonitorConfig) *Monitor { return &Monitor{cfg: cfg} }

const monitorDescription = `Watch something in the background and be woken when it says something: the output of a command you start (command), of a background shell already running (task_id), a file that grows such as a log (file), or an MCP server's resource (mcp_resource: resources/subscribe; each update reads it again). Give exactly one of them.

Lines that match filter (a Go regular expression; all lines without one) reach you as a <task-notification> from the monitor's task id, even when you are idle: matching lines are batched, at most one notification every batch_ms (default 2000), the first lines of the batch shown and the rest counted. The monitor's output file keeps every line it saw. It runs until its source ends (a command exits: you are told how) or you stop it with TaskStop.

Use it instead of polling: to learn when a dev server crashes, a build or test run prints an error, a log shows a pattern, or a deploy finishes.`

const monitorSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "A shell command to start and watch (its stdout and stderr)"},
    "task_id": {"type": "string", "description": "The id of a background shell to watch from now on"},
    "file": {"type": "string", "description": "A file to follow as it grows, from its current end (truncation and rotation are followed)"},
    "mcp_resource": {"type": "object", "properties": {"server": {"type": "string"}, "uri": {"type": "string"}}, "required": ["server", "uri"], "additionalProperties": false,
      "description": "An MCP server's resource to subscribe to"},
    "filter": {"type": "string", "description": "Only lines matching this regular expression wake you (Go syntax, such as (?i)error|panic)"},
    "description": {"type": "string", "description": "A few words saying what is watched and why"},
    "batch_ms": {"type": "integer", "minimum": 100, "description": "The batching window in milliseconds: at most one notification per window (default 2000)"}
  },
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*Monitor) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: MonitorName, Description: monitorDescription, InputSchema: json.RawMessage(monitorSchema)}
}

type monitorInput struct {
	Command     string `json:"command"`
	TaskID      string `json:"task_id"`
	File        string `json:"file"`
	MCPResource *struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	} `json:"mcp_resource"`
	Filter      string `json:"filter"`
	Description string `json:"description"`
	BatchMS     *int64 `json:"batch_ms"`
}

// ReadOnly implements tool.Tool: following a task's output or an MCP
// resource changes nothing; a command runs a shell, and a file may be
// anywhere, so those are asked for like Bash and Read outside the project.
func (*Monitor) ReadOnly(input json.RawMessage) bool {
	var in monitorInput
	if json.Unmarshal(input, &in) != nil {
		return false
	}
	return in.Command == "" && in.File == "" && (in.TaskID != "" || in.MCPResource != nil)
}

// maxResourceLines bounds the lines one resource update hands over.
const maxResourceLines = 200

// Run implements tool.Tool.
func (m *Monitor) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in monitorInput
	if res, ok := tool.Decode(MonitorName, call.Input, &in); !ok {
		return res, nil
	}
	reg := m.cfg.Registry
	if reg == nil {
		return tool.Errorf("Monitor: background tasks are not available in this session"), nil
	}
	given := 0
	for _, set := range []bool{strings.TrimSpace(in.Command) != "", strings.TrimSpace(in.TaskID) != "", strings.TrimSpace(in.File) != "", in.MCPResource != nil} {
		if set {
			given++
		}
	}
	if given != 1 {
		return tool.Errorf("Monitor: give exactly one of command, task_id, file and mcp_resource (got %d)", given), nil
	}
	var filter *regexp.Regexp
	if in.Filter != "" {
		re, err := regexp.Compile(in.Filter)
		if err != nil {
			return tool.Errorf("Monitor: filter is not a valid regular expression: %v", err), nil
		}
		filter = re
	}
	batch := taskreg.DefaultMonitorBatch
	if in.BatchMS != nil {
		if *in.BatchMS < taskreg.MinMonitorBatch.Milliseconds() {
			return tool.Errorf("Monitor: batch_ms must be at least %d, got %d", taskreg.MinMonitorBatch.Milliseconds(), *in.BatchMS), nil
		}
		batch = time.Duration(min(*in.BatchMS, int64(time.Hour/time.Millisecond))) * time.Millisecond
	}
	spec := taskreg.MonitorSpec{Description: in.Description, ToolUseID: call.ID, Filter: filter, Batch: batch,
		Detail: taskreg.Monitor{AgentID: m.cfg.AgentID}}
	var watching string
	switch {
	case in.Command != "":
		lines, shell, stop, err := reg.CommandSource(taskreg.ShellSpec{Command: in.Command, Description: in.Description,
			ToolUseID: call.ID, AgentID: m.cfg.AgentID, Dir: m.cfg.Dir, Env: m.cfg.Env})
		if err != nil {
			return tool.Errorf("Monitor: start the command: %v", err), nil
		}
		spec.Lines, spec.Stop = lines, stop
		spec.Detail.Source, spec.Detail.Target, spec.Detail.Shell = "command", in.Command, shell
		watching = fmt.Sprintf("the output of %q (shell %s)", in.Command, shell)
	case in.TaskID != "":
		id := taskreg.ID(strings.TrimSpace(in.TaskID))
		st, ok := reg.Get(id)
		if !ok {
			return tool.Errorf("Monitor: no task %s", id), nil
		}
		if st.Type != taskreg.LocalBash {
			return tool.Errorf("Monitor: task %s is a %s; task_id follows a background shell's output (its end reaches you anyway)", id, st.Type), nil
		}
		if st.Status.Terminal() {
			return tool.Errorf("Monitor: task %s has already ended (%s); read its output with TaskOutput", id, st.Status), nil
		}
		spec.Lines = reg.FollowTask(id, false)
		spec.Detail.Source, spec.Detail.Target = "task", string(id)
		watching = "the output of shell " + string(id) + " from now on"
	case in.File != "":
		path := in.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(m.cfg.Dir, path)
		}
		spec.Lines = taskreg.FollowFile(path, nil)
		spec.Detail.Source, spec.Detail.Target = "file", path
		watching = "the file " + path + " as it grows"
	default:
		r := in.MCPResource
		if r.Server == "" || r.URI == "" {
			return tool.Errorf("Monitor: mcp_resource needs both server and uri"), nil
		}
		if m.cfg.Resources == nil {
			return tool.Errorf("Monitor: no MCP server is connected in this session"), nil
		}
		lines, stop, err := resourceSource(ctx, m.cfg.Resources, r.Server, r.URI)
		if err != nil {
			return tool.Errorf("Monitor: %v", err), nil
		}
		spec.Lines, spec.Stop = lines, stop
		spec.Detail.Source, spec.Detail.Target, spec.Detail.Server = "mcp_resource", r.Server+" "+r.URI, r.Server
		watching = fmt.Sprintf("the resource %s of MCP server %s (each update is read again)", r.URI, r.Server)
	}
	if spec.Description == "" {
		spec.Description = firstLine(spec.Detail.Target, 80)
	}
	st, err := reg.StartMonitor(spec)
	if err != nil {
		return tool.Errorf("Monitor: %v", err), nil
	}
	which := "every line"
	if filter != nil {
		which = fmt.Sprintf("lines matching %s", filter)
	}
	return tool.Result{Content: fmt.Sprintf("Monitor %s started, watching %s. You get %s as a notification from task %s, at most one every %v, even while idle. Every line seen goes to %s. TaskStop %s ends it.",
		st.ID, watching, which, st.ID, batch, st.OutputFile, st.ID)}, nil
}

// resourceSource subscribes to an MCP resource now (so that a refusal is
// the tool call's error) and returns the source that, on each update,
// hands over a line saying so and the resource's text, and the function
// that unsubscribes.
func resourceSource(ctx context.Context, res Resources, server, uri string) (taskreg.LineSource, func(), error) {
	updates, stop, err := res.WatchResource(ctx, server, uri)
	if err != nil {
		return nil, nil, err
	}
	src := func(ctx context.Context, emit func(string) bool) (taskreg.SourceEnd, error) {
		for {
			select {
			case <-ctx.Done():
				return taskreg.SourceEnd{}, nil
			case <-updates:
			}
			if !emit(fmt.Sprintf("[resource %s of %s updated]", uri, server)) {
				return taskreg.SourceEnd{}, nil
			}
			text, err := res.ReadResourceText(ctx, server, uri)
			if err != nil {
				if !emit("[read failed: " + err.Error() + "]") {
					return taskreg.SourceEnd{}, nil
				}
				continue
			}
			lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
			if len(lines) > maxResourceLines {
				rest := len(lines) - maxResourceLines
				lines = append(lines[:maxResourceLines], fmt.Sprintf("[+%d more lines of the resource: ReadMcpResource reads it whole]", rest))
			}
			for _, l := range lines {
				if !emit(l) {
					return taskreg.SourceEnd{}, nil
				}
			}
		}
	}
	return src, stop, nil
}

// firstLine returns s's first line, cut to n bytes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
