package dashboardcmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/troupe-dev/troupe/internal/dirwatch"
	"github.com/troupe-dev/troupe/transcript"
	"github.com/troupe-dev/troupe/workflow"
)

// watchWorkflows returns the dashboard's watch of a session's workflow
// runs in the local home: a kick when a run starts (a wf_ folder appears
// under <session>/workflows, or that folder does) or one of the newest
// runs writes its journal, output or run.json. A session with no folder
// here is watched for nothing (the page shows no runs for it).
func (a *app) watchWorkflows(w *dirwatch.Watcher) func(ctx context.Context, session string) (<-chan struct{}, error) {
	home, err := a.Home()
	if err != nil || w == nil {
		return nil
	}
	return func(ctx context.Context, session string) (<-chan struct{}, error) {
		out := make(chan struct{}, 1)
		if !transcript.ValidSession(session) {
			close(out)
			return out, nil
		}
		dir := transcript.Dir(home, session)
		root := filepath.Join(dir, "workflows")
		shape := make(chan struct{}, 1) // a run or the runs' folder came or went
		change := make(chan struct{}, 1)
		kick := func(ch chan struct{}) func() {
			return func() {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
		var cancels []func()
		subscribe := func() {
			for _, c := range cancels {
				c()
			}
			cancels = cancels[:0]
			add := func(d string, match func(string) bool, ch chan struct{}) {
				if c, err := w.SubscribeFunc(d, match, kick(ch)); err == nil {
					cancels = append(cancels, c)
				}
			}
			add(dir, func(n string) bool { return n == "workflows" }, shape)
			add(root, workflow.ValidRunID, shape)
			for _, id := range newestRuns(root) {
				add(filepath.Join(root, id), nil, change)
			}
		}
		subscribe()
		go func() {
			defer close(out)
			defer func() {
				for _, c := range cancels {
					c()
				}
			}()
			for {
				select {
				case <-ctx.Done():
					return
				case <-shape:
					subscribe()
				case <-change:
				}
				kick(out)()
			}
		}()
		return out, nil
	}
}

// newestRuns are the ids of the newest maxWorkflowRuns run folders under
// root, by the folders' times: a run whose run.json is not written yet
// counts too (workflow.ListRuns leaves it out).
func newestRuns(root string) []string {
	ents, _ := os.ReadDir(root)
	type run struct {
		id string
		at time.Time
	}
	var runs []run
	for _, e := range ents {
		if !e.IsDir() || !workflow.ValidRunID(e.Name()) {
			continue
		}
		if fi, err := e.Info(); err == nil {
			runs = append(runs, run{e.Name(), fi.ModTime()})
		}
	}
	slices.SortFunc(runs, func(a, b run) int { return b.at.Compare(a.at) })
	var ids []string
	for _, r := range runs[:min(len(runs), maxWorkflowRuns)] {
		ids = append(ids, r.id)
	}
	return ids
}
