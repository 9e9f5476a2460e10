package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tool"
)

// headless holds the flags of `troupe -p`.
type headless struct {
	print        bool
	outputFormat string
	provider     string
	model        string
	script       string
	maxTurns     int
	cwd          string
	system       string
	transcript   string
}

// addHeadlessFlags puts the flags of the headless mode on the root.
func (a *app) addHeadlessFlags(root *cobra.Command, h *headless) {
	f := root.Flags()
	f.BoolVarP(&h.print, "print", "p", false, "run one agent headless on the prompt (the arguments, or stdin) and print the result")
	f.StringVar(&h.outputFormat, "output-format", "text", "with -p: `text`, json (one result object) or stream-json (one event a line)")
	f.StringVar(&h.provider, "provider", "", "model provider: anthropic, openai or scripted (default: anthropic if ANTHROPIC_API_KEY is set, else openai if OPENAI_API_KEY or OPENAI_BASE_URL is set)")
	f.StringVar(&h.model, "model", "", "model id (default: the provider's)")
	f.StringVar(&h.script, "script", "", "with --provider scripted: the script `FILE` (format: docs/scripted.md)")
	f.IntVar(&h.maxTurns, "max-turns", agent.DefaultMaxTurns, "bound on model calls in one run")
	f.StringVar(&h.cwd, "cwd", "", "working `DIR` for the agent's tools (default: the current folder)")
	f.StringVar(&h.system, "system-prompt", "", "replace the default system prompt")
	f.StringVar(&h.transcript, "transcript", "", "append the run's events as JSON lines to `FILE`")
}

// runRoot is the root command's action: the headless mode with -p, help
// otherwise (the interactive lead is not built yet).
func (a *app) runRoot(cmd *cobra.Command, args []string, h *headless) error {
	if !h.print {
		if len(args) > 0 {
			msg := fmt.Sprintf("unknown command %q for \"troupe\"", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			} else {
				msg += fmt.Sprintf(" (to run an agent on a prompt: troupe -p %q)", strings.Join(args, " "))
			}
			return &UsageError{Cmd: "troupe", Err: errors.New(msg)}
		}
		return cmd.Help()
	}
	switch h.outputFormat {
	case "text", "json", "stream-json":
	default:
		return usagef("--output-format %q: want text, json or stream-json", h.outputFormat)
	}
	if h.maxTurns <= 0 {
		return usagef("--max-turns %d: want a positive number", h.maxTurns)
	}
	prompt := strings.Join(args, " ")
	if strings.TrimSpace(prompt) == "" {
		b, err := io.ReadAll(io.LimitReader(a.Stdin, mailbox.MaxTextLen+1))
		if err != nil {
			return fmt.Errorf("read the prompt from stdin: %w", err)
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return usagef("no prompt: give it as arguments (troupe -p \"...\") or on stdin")
	}
	cwd := h.cwd
	if cwd == "" {
		wd, err := a.Getwd()
		if err != nil {
			return err
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return usagef("--cwd %s: not a folder", cwd)
	}
	model, err := a.openModel(h)
	if err != nil {
		return err
	}
	tools, err := coreTools(cwd)
	if err != nil {
		return err
	}
	out := newEventWriter(a.Stdout, h.outputFormat, a.NewID(), model.Info())
	cfg := agent.Config{Model: model, ModelName: h.model, System: systemPrompt(h.system, cwd), Tools: tools,
		MaxTurns: h.maxTurns, OnEvent: out.event, Now: a.Now}
	if h.transcript != "" {
		f, err := os.OpenFile(h.transcript, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("--transcript: %w", err)
		}
		defer f.Close()
		cfg.Transcript = f
	}
	ag, err := agent.New(cfg)
	if err != nil {
		return err
	}
	defer ag.Kill()
	out.init(cwd, tools.Names())
	res, runErr := ag.Run(cmd.Context(), prompt)
	return out.finish(res, runErr)
}

// systemPrompt returns the system prompt of a headless agent.
func systemPrompt(custom, cwd string) string {
	if custom != "" {
		return custom
	}
	return fmt.Sprintf(`You are troupe, a software engineering agent working in %s.
Use the tools to read, search, edit and run things in that folder. Work carefully and finish the task; when you are done, answer with a short report of what you did.`, cwd)
}

// coreTools returns the tools of a headless agent rooted at cwd.
func coreTools(cwd string) (*tool.Registry, error) {
	return tool.NewRegistry(coreToolList(cwd)...)
}

// eventWriter prints a run in one of the output formats.
type eventWriter struct {
	w       io.Writer
	format  string
	session string
	info    llm.Info

	mu sync.Mutex // serializes writes from parallel tool calls
}

func newEventWriter(w io.Writer, format, session string, info llm.Info) *eventWriter {
	return &eventWriter{w: w, format: format, session: session, info: info}
}

func (e *eventWriter) line(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.w.Write(append(b, '\n'))
}

// Lines of the stream-json format, one JSON object a line, "type" first.
type (
	streamInit struct {
		Type      string   `json:"type"`
		Subtype   string   `json:"subtype"`
		SessionID string   `json:"session_id"`
		Cwd       string   `json:"cwd"`
		Provider  string   `json:"provider"`
		Model     string   `json:"model"`
		Tools     []string `json:"tools"`
	}
	streamMessage struct {
		Type      string       `json:"type"`
		SessionID string       `json:"session_id"`
		Message   *llm.Message `json:"message"`
		Usage     *llm.Usage   `json:"usage,omitempty"`
	}
	streamSystem struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		SessionID string `json:"session_id"`
		Error     string `json:"error,omitempty"`
		Summary   string `json:"summary,omitempty"`
	}
	streamResult struct {
		Type         string         `json:"type"`
		Subtype      string         `json:"subtype"`
		IsError      bool           `json:"is_error"`
		SessionID    string         `json:"session_id"`
		Result       string         `json:"result"`
		NumTurns     int            `json:"num_turns"`
		ToolUses     int            `json:"tool_uses"`
		DurationMS   int64          `json:"duration_ms"`
		StopReason   llm.StopReason `json:"stop_reason"`
		Usage        llm.Usage      `json:"usage"`
		TotalCostUSD *float64       `json:"total_cost_usd,omitempty"`
		Provider     string         `json:"provider"`
		Model        string         `json:"model"`
		Error        string         `json:"error,omitempty"`
	}
)

func (e *eventWriter) init(cwd string, tools []string) {
	if e.format != "stream-json" {
		return
	}
	if tools == nil {
		tools = []string{}
	}
	e.line(streamInit{"system", "init", e.session, cwd, e.info.Provider, e.info.Model, tools})
}

// event receives agent events.
func (e *eventWriter) event(ev agent.Event) {
	if e.format != "stream-json" {
		return
	}
	switch ev.Type {
	case agent.EventAssistant:
		e.line(streamMessage{"assistant", e.session, ev.Message, ev.Usage})
	case agent.EventUser:
		e.line(streamMessage{"user", e.session, ev.Message, nil})
	case agent.EventRetry:
		e.line(streamSystem{Type: "system", Subtype: "retry", SessionID: e.session, Error: errString(ev.Err)})
	case agent.EventCompact:
		e.line(streamSystem{Type: "system", Subtype: "compact", SessionID: e.session, Summary: ev.Text})
	}
}

// finish prints the run's result and returns the command's error.
func (e *eventWriter) finish(res agent.Result, runErr error) error {
	r := streamResult{Type: "result", Subtype: "success", SessionID: e.session, Result: res.Text,
		NumTurns: res.Calls, ToolUses: res.ToolUses, DurationMS: res.Duration.Milliseconds(),
		StopReason: res.StopReason, Usage: res.Usage, Provider: e.info.Provider, Model: e.info.Model}
	switch {
	case runErr != nil:
		r.Subtype, r.Error = "error_during_execution", runErr.Error()
	case res.StopReason == agent.StopMaxTurns:
		r.Subtype = "error_max_turns"
	case res.Interrupted:
		r.Subtype = "interrupted"
	}
	r.IsError = r.Subtype != "success"
	if usd, ok := cost(e.info, res.Usage); ok {
		r.TotalCostUSD = &usd
	}
	switch e.format {
	case "stream-json":
		e.line(r)
	case "json":
		b, _ := json.MarshalIndent(r, "", "  ")
		e.mu.Lock()
		fmt.Fprintln(e.w, string(b))
		e.mu.Unlock()
	default:
		if res.Text != "" {
			fmt.Fprintln(e.w, res.Text)
		}
	}
	switch {
	case runErr != nil:
		return runErr
	case res.StopReason == agent.StopMaxTurns:
		return fmt.Errorf("stopped at the --max-turns limit (%d model calls) before the task was done", res.Calls)
	case res.Interrupted:
		return errors.New("interrupted")
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
