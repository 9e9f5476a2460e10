package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

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
