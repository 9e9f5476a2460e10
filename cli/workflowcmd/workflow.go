// Package workflowcmd is `troupe workflow`: run a workflow script headless
// (run, resume) and list named workflows and recent runs
// (docs/workflows.md). The agents are built by the caller's Open, the same
// sub-agents the lead's Workflow tool runs; this package only drives the
// engine (package github.com/troupe-dev/troupe/workflow) and prints.
package workflowcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/workflow"
)

// Exit statuses of run and resume.
const (
	ExitScript = 1 // the script threw or its promise rejected
	ExitBudget = 6 // a budget stopped it (as troupe -p)
)

// Env is what a run needs, opened by the command line for the working
// folder: the runner of the agents, where runs go and the named
// workflows' folders. Close ends it.
type Env struct {
	// Cwd is the working folder: a relative FILE is taken in it.
	Cwd     string
	Runner  workflow.Runner
	Root    string
	Dirs    []string
	Options workflow.Options
	// Budget reports whether err is a budget stop (budget.ErrExceeded).
	Budget func(err error) bool
	Close  func()
}

// Config is what the command line gives this package.
type Config struct {
	// Flags, when set, adds the session's flags (model, permissions,
	// working folder, budget) to run and resume.
	Flags func(*pflag.FlagSet)
	// Open opens the environment of a run.
	Open func(ctx context.Context) (*Env, error)
	// Lookup returns the named workflows' folders and where runs are,
	// without opening a session (for list and resume).
	Lookup func() (dirs []string, runs []string, err error)
}

type app struct {
	*cli.App
	cfg Config
}

// New returns `troupe workflow`.
func New(c *cli.App, cfg Config) *cobra.Command {
	a := &app{App: c, cfg: cfg}
	return cli.Group("workflow", "Run deterministic multi-agent workflow scripts (docs/workflows.md)",
		a.runCommand(), a.resumeCommand(), a.listCommand())
}

type runFlags struct {
	args   string
	format string
}

func (a *app) addRunFlags(cmd *cobra.Command, f *runFlags) {
	cmd.Flags().StringVar(&f.args, "args", "", "the script's `JSON` args, verbatim")
	cmd.Flags().StringVar(&f.format, "output-format", "text", "`text` (progress on stderr, the result on stdout), json (one result object) or stream-json (one event a line)")
	if a.cfg.Flags != nil {
		a.cfg.Flags(cmd.Flags())
	}
}

func (a *app) runCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run NAME|FILE",
		Short: "Run a workflow headless: a named one (.claude/workflows, .troupe/workflows, your home's) or a script file",
		Long: `troupe workflow run runs a workflow script to its end and prints its return
value. NAME is looked for as NAME.js in the project's .claude/workflows and
.troupe/workflows, then in ~/.claude/workflows and the troupe home's workflows;
anything with a slash or ending in .js is a file. Exit status: 0, 1 when the
script throws or its promise rejects (with the stack in script lines), 6 when
a budget stopped it.`,
		Args: cli.Positional("NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.run(cmd.Context(), args[0], "", f)
		},
	}
	a.addRunFlags(cmd, &f)
	return cmd
}

func (a *app) resumeCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Run a workflow run's script again, answering the agent() calls that finished from its journal",
		Long: `troupe workflow resume runs the script saved in run RUN (wf_...) again: its
agent() calls are answered from RUN's journal, in order, up to the first whose
prompt or options changed, that failed or that never finished; that one and
every later one run again. The new run has its own id. --args defaults to
RUN's args.`,
		Args: cli.Positional("RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.run(cmd.Context(), "", args[0], f)
		},
	}
	a.addRunFlags(cmd, &f)
	return cmd
}

// findRun returns the folder of run id among the runs' folders.
func (a *app) findRun(id string) (root string, err error) {
	if a.cfg.Lookup == nil {
		return "", errors.New("workflow runs cannot be found here")
	}
	_, roots, err := a.cfg.Lookup()
	if err != nil {
		return "", err
	}
	for _, r := range roots {
		if _, err := workflow.RunPath(r, id); err == nil {
			return r, nil
		}
	}
	return "", fmt.Errorf("%w: %s", workflow.ErrNoRun, termtext.Line(id))
}

func (a *app) run(ctx context.Context, target, resume string, f runFlags) error {
	switch f.format {
	case "text", "json", "stream-json":
	default:
		return cli.Usagef("--output-format %q: want text, json or stream-json", f.format)
	}
	var args json.RawMessage
	if f.args != "" {
		if !json.Valid([]byte(f.args)) {
			return cli.Usagef("--args: not JSON: %s", termtext.Line(f.args))
		}
		args = json.RawMessage(f.args)
	}
	var script *workflow.Script
	var resumeRoot string
	if resume != "" {
		root, err := a.findRun(resume)
		if err != nil {
			return err
		}
		resumeRoot = root
		p, _ := workflow.RunPath(root, resume)
		if script, err = workflow.Load(filepath.Join(p, workflow.ScriptFile)); err != nil {
			return err
		}
		if args == nil {
			if b, err := os.ReadFile(filepath.Join(p, workflow.RunFile)); err == nil {
				var ri workflow.RunInfo
				if json.Unmarshal(b, &ri) == nil {
					args = ri.Args
				}
			}
		}
	}
	env, err := a.cfg.Open(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	if script == nil {
		path := target
		if !strings.ContainsRune(target, filepath.Separator) && !strings.HasSuffix(target, ".js") && !strings.HasSuffix(target, ".mjs") {
			if path, err = workflow.Find(env.Dirs, target); err != nil {
				return err
			}
		} else if !filepath.IsAbs(path) && env.Cwd != "" {
			path = filepath.Join(env.Cwd, path)
		}
		if script, err = workflow.Load(path); err != nil {
			return scriptFailed(a.Stderr, err)
		}
	}
	out := &printer{w: a.Stdout, errw: a.Stderr, format: f.format}
	l := workflow.Launch{Script: script, Args: args, Root: env.Root, ResumeFrom: resume, ResumeRoot: resumeRoot, Runner: env.Runner, Options: env.Options,
		OnEvent: func(e workflow.Event) { out.event(e) }}
	j, err := workflow.Prepare(l)
	if err != nil {
		return err
	}
	out.runID = j.ID
	out.start(script, j)
	info, res, runErr := j.Run(ctx)
	out.result(info, res, runErr)
	switch {
	case runErr == nil:
		return nil
	case errors.Is(runErr, workflow.ErrBudget) || (env.Budget != nil && env.Budget(runErr)):
		fmt.Fprintf(a.Stderr, "troupe: workflow %s stopped at a budget: %s\n", j.ID, termtext.Clean(runErr.Error()))
		return &cli.ExitError{Code: ExitBudget, Msg: runErr.Error()}
	case ctx.Err() != nil:
		return runErr
	}
	return scriptFailed(a.Stderr, fmt.Errorf("run %s: %w", j.ID, runErr))
}

// scriptFailed prints err (with its stack) and ends with ExitScript.
func scriptFailed(stderr io.Writer, err error) error {
	fmt.Fprintf(stderr, "troupe: %s\n", termtext.Clean(err.Error()))
	return &cli.ExitError{Code: ExitScript, Msg: err.Error()}
}

// printer prints a run in one of the output formats.
type printer struct {
	w, errw io.Writer
	format  string
	runID   string
	mu      sync.Mutex // events come from the run's loop, the rest from the command
}

func (p *printer) line(v any) {
	b, _ := json.Marshal(v)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.w.Write(append(b, '\n'))
}

func (p *printer) start(s *workflow.Script, j *workflow.Job) {
	switch p.format {
	case "stream-json":
		p.line(map[string]any{"type": "system", "subtype": "workflow_init", "run_id": j.ID, "name": s.Meta.Name,
			"description": s.Meta.Description, "phases": s.Meta.PhaseTitles(), "run_dir": j.Dir.Path})
	case "text":
		fmt.Fprintf(p.errw, "workflow %s: run %s (%s)\n", termtext.Line(s.Meta.Name), j.ID, j.Dir.Path)
	}
}

func (p *printer) event(e workflow.Event) {
	switch p.format {
	case "stream-json":
		m := map[string]any{"type": "workflow", "subtype": string(e.Kind), "run_id": p.runID}
		if e.Index >= 0 {
			m["index"], m["label"] = e.Index, e.Label
		}
		if e.Phase != "" {
			m["phase"] = e.Phase
		}
		if e.Text != "" {
			m["text"] = e.Text
		}
		if e.Err != "" {
			m["error"] = e.Err
		}
		if e.Cached {
			m["cached"] = true
		}
		if e.Kind == workflow.EventDone || e.Kind == workflow.EventFailed {
			m["usage"] = e.Usage
		}
		if e.Kind == workflow.EventActivity {
			m["tokens"] = e.Tokens
		}
		p.line(m)
	case "text":
		if l := workflow.OutputLine(e); l != "" {
			fmt.Fprintln(p.errw, termtext.Clean(l))
		}
	}
}

func (p *printer) result(info workflow.RunInfo, res workflow.Result, err error) {
	m := map[string]any{"type": "result", "subtype": "success", "is_error": false, "run_id": info.ID,
		"status": info.Status, "agents": res.Agents, "cached": res.Cached, "failed": res.Failed, "usage": res.Usage,
		"duration_ms": info.Ended.Sub(info.Started).Milliseconds()}
	if err != nil {
		m["subtype"], m["is_error"], m["error"] = "error", true, err.Error()
	} else {
		m["result"] = res.Value
	}
	switch p.format {
	case "stream-json", "json":
		p.line(m)
	case "text":
		if err == nil {
			var v any
			if json.Unmarshal(res.Value, &v) == nil {
				if s, ok := v.(string); ok {
					fmt.Fprintln(p.w, s)
					return
				}
			}
			b, _ := json.MarshalIndent(json.RawMessage(res.Value), "", "  ")
			fmt.Fprintln(p.w, string(b))
		}
	}
}

func (a *app) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the named workflows and the recent runs (state, agents, tokens)",
		Args:  cli.Positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.cfg.Lookup == nil {
				return errors.New("workflows cannot be listed here")
			}
			dirs, roots, err := a.cfg.Lookup()
			if err != nil {
				return err
			}
			named := workflow.List(dirs)
			var runs []workflow.RunInfo
			for _, r := range roots {
				rs, err := workflow.ListRuns(r)
				if err != nil {
					return err
				}
				runs = append(runs, rs...)
			}
			sortRuns(runs)
			if len(runs) > 20 {
				runs = runs[:20]
			}
			if a.JSON {
				type namedJSON struct {
					Name        string   `json:"name"`
					Path        string   `json:"path"`
					Description string   `json:"description,omitempty"`
					Phases      []string `json:"phases,omitempty"`
					Error       string   `json:"error,omitempty"`
				}
				out := struct {
					Named []namedJSON        `json:"named"`
					Runs  []workflow.RunInfo `json:"runs"`
				}{Named: []namedJSON{}, Runs: runs}
				for _, n := range named {
					nj := namedJSON{Name: n.Name, Path: n.Path, Description: n.Meta.Description, Phases: n.Meta.PhaseTitles()}
					if n.Err != nil {
						nj.Error = n.Err.Error()
					}
					out.Named = append(out.Named, nj)
				}
				if out.Runs == nil {
					out.Runs = []workflow.RunInfo{}
				}
				b, _ := json.MarshalIndent(out, "", "  ")
				fmt.Fprintln(a.Stdout, string(b))
				return nil
			}
			tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAMED WORKFLOW\tPHASES\tDESCRIPTION")
			for _, n := range named {
				desc := n.Meta.Description
				if n.Err != nil {
					desc = "error: " + n.Err.Error()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", termtext.Line(n.Name), termtext.Line(strings.Join(n.Meta.PhaseTitles(), " → ")), termtext.Line(desc))
			}
			if len(named) == 0 {
				fmt.Fprintln(tw, "(none)\t\t")
			}
			tw.Flush()
			fmt.Fprintln(a.Stdout)
			tw = tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tNAME\tSTATE\tAGENTS\tTOKENS\tSTARTED")
			for _, r := range runs {
				agents := fmt.Sprint(r.Agents)
				if r.Cached > 0 {
					agents += fmt.Sprintf(" (%d cached)", r.Cached)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, termtext.Line(r.Name), r.Status, agents, r.Usage.Total(), r.Started.Local().Format(time.DateTime))
			}
			if len(runs) == 0 {
				fmt.Fprintln(tw, "(none)\t\t\t\t\t")
			}
			return tw.Flush()
		},
	}
}

func sortRuns(runs []workflow.RunInfo) {
	for i := 1; i < len(runs); i++ {
		for j := i; j > 0 && runs[j].Started.After(runs[j-1].Started); j-- {
			runs[j], runs[j-1] = runs[j-1], runs[j]
		}
	}
}
