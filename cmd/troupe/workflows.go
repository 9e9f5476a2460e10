package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/cli/mate"
	"github.com/troupe-dev/troupe/cli/workflowcmd"

	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/transcript"
	"github.com/troupe-dev/troupe/workflow"
)

// workflowFlags are --workflows and --workflow-concurrency
// (docs/workflows.md).
type workflowFlags struct {
	on          bool
	concurrency int
}

func addWorkflowFlags(f *pflag.FlagSet, w *workflowFlags) {
	f.BoolVar(&w.on, "workflows", false, "offer the lead the Workflow tool: deterministic multi-agent scripts run as background tasks (docs/workflows.md); also the setting workflows: true")
	f.IntVar(&w.concurrency, "workflow-concurrency", 0, fmt.Sprintf("how many of a workflow's agents run at once (default %d; setting workflowConcurrency)", workflow.DefaultConcurrency))
}

// workflowWords are the words by which a prompt asks for a workflow (or
// for orchestration), which offers the lead the Workflow tool for that run.
var workflowWords = regexp.MustCompile(`(?i)\b(workflows?|orchestrat(e|es|ed|ing|ion))\b`)

// asksForWorkflow reports whether prompt asks for a workflow: troupe -p's
// keyword opt-in (the interactive lead's tools are set before its first
// prompt: it takes --workflows or the setting).
func asksForWorkflow(prompt string) bool { return workflowWords.MatchString(prompt) }

// workflowOptions returns the lead's Workflow tool options, nil when the
// person did not opt in (--workflows, or the setting workflows: true).
// Runs go in the session's folder; the budget stops new agent() calls.
func (a *app) workflowOptions(h *headless, cwd string, lr *leadRun) (*kit.WorkflowOptions, error) {
	home, err := a.Home()
	if err != nil {
		return nil, err
	}
	files := settings.Files(home, cwd)
	on := h.workflows.on
	if !on {
		if on, _, err = settings.Key[bool](files, "workflows"); err != nil || !on {
			return nil, err
		}
	}
	conc, err := workflowConcurrency(h.workflows.concurrency, files)
	if err != nil {
		return nil, err
	}
	o := &kit.WorkflowOptions{Root: filepath.Join(transcript.Dir(home, lr.id), "workflows"),
		Dirs: workflow.Dirs(cwd, a.Getenv("HOME"), home), Options: workflow.Options{Concurrency: conc}}
	if lr.out != nil && lr.out.Meter != nil {
		o.Options.Budget = lr.out.Meter.Exceeded
	}
	return o, nil
}

// workflowConcurrency is --workflow-concurrency, else the setting
// workflowConcurrency, else the default (0).
func workflowConcurrency(flag int, files []settings.File) (int, error) {
	if flag < 0 {
		return 0, fmt.Errorf("--workflow-concurrency %d: want a positive number", flag)
	}
	if flag > 0 {
		return flag, nil
	}
	n, file, err := settings.Key[float64](files, "workflowConcurrency")
	if err != nil {
		return 0, err
	}
	if n < 0 || n != float64(int(n)) {
		return 0, fmt.Errorf("%s: workflowConcurrency %v: want a positive whole number", file, n)
	}
	return int(n), nil
}

// workflowCommand is `troupe workflow` (cli/workflowcmd): its runs are
// headless leads' sessions whose agents are the Workflow tool's, built
// by openLead with the session flags of -p.
func (a *app) workflowCommand() *cobra.Command {
	h := &headless{print: true, outputFormat: "text"}
	h.teams.mate, h.teams.digest = &mate.Flags{}, digestNextInput // no team: the agents are sub-agents
	return workflowcmd.New(a.App, workflowcmd.Config{
		Flags: func(f *pflag.FlagSet) {
			h.model.Add(f)
			f.StringVar(&h.cwd, "cwd", "", "working `DIR` of the agents (default: the current folder)")
			f.BoolVar(&h.trust, "trust", false, "trust the working folder, as troupe trust DIR does (recorded), and run")
			f.BoolVar(&h.noInstr, "no-project-instructions", false, "do not give agents the CLAUDE.md and AGENTS.md files")
			f.IntVar(&h.maxTurns, "max-turns", agent.DefaultMaxTurns, "bound on model calls of each agent")
			h.perm.Add(f, "", false)
			h.budget.Add(f)
			f.IntVar(&h.workflows.concurrency, "workflow-concurrency", 0, fmt.Sprintf("how many agents run at once (default %d; setting workflowConcurrency)", workflow.DefaultConcurrency))
		},
		Open: func(ctx context.Context) (*workflowcmd.Env, error) {
			h.workflows.on = true
			cwd, err := a.WorkDir(h.cwd)
			if err != nil {
				return nil, err
			}
			if err := a.trustGate(ctx, h, cwd, false); err != nil { // trust.go: before anything of the folder is read
				return nil, err
			}
			if h.maxTurns <= 0 {
				return nil, cli.Usagef("--max-turns %d: want a positive number", h.maxTurns)
			}
			lr, err := a.openLead(ctx, h, cwd, false)
			if err != nil {
				if lr != nil {
					lr.close()
				}
				return nil, err
			}
			wf := lr.workflows
			if wf == nil || wf.Runner == nil {
				lr.close()
				return nil, errors.New("troupe workflow: the session has no workflow agents")
			}
			return &workflowcmd.Env{Cwd: cwd, Runner: wf.Runner, Root: wf.Root, Dirs: wf.Dirs, Options: wf.Options,
				Budget: func(err error) bool { return errors.Is(err, budget.ErrExceeded) },
				Close:  lr.close}, nil
		},
		Lookup: func() ([]string, []string, error) {
			home, err := a.Home()
			if err != nil {
				return nil, nil, err
			}
			cwd, err := a.WorkDir(h.cwd)
			if err != nil {
				return nil, nil, err
			}
			roots, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "workflows"))
			return workflow.Dirs(cwd, a.Getenv("HOME"), home), roots, nil
		},
	})
}
