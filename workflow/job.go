package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Launch describes a run to start.
type Launch struct {
	Script *Script
	Args   json.RawMessage
	// Root is the folder that holds run folders (a session's
	// workflows/ folder, or --outdir).
	Root string
	// ResumeFrom, when set, is a run whose journal answers this run's
	// agent() calls (see the package doc), under ResumeRoot (default Root).
	ResumeFrom, ResumeRoot string
	Runner                 Runner
	// Options are the engine's; Cache and Record are set by the job.
	Options Options
	// OnEvent, when set, gets every event after the job wrote it to the
	// output file (on the loop goroutine; it must not block).
	OnEvent func(Event)
	// Now stamps run.json (default time.Now).
	Now func() time.Time
}

// Job is a prepared run: its folder exists, its script is saved, and its
// cache is loaded.
type Job struct {
	l     Launch
	ID    string
	Dir   *Dir
	cache []Entry
	info  RunInfo
}

// Prepare makes the run's folder (a fresh run id under l.Root) and loads
// the journal of l.ResumeFrom.
func Prepare(l Launch) (*Job, error) {
	if l.Script == nil || l.Runner == nil {
		return nil, errors.New("workflow: a launch needs a script and a runner")
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	var cache []Entry
	if l.ResumeFrom != "" {
		root := l.ResumeRoot
		if root == "" {
			root = l.Root
		}
		p, err := RunPath(root, l.ResumeFrom)
		if err != nil {
			return nil, err
		}
		if cache, err = LoadJournal(p); err != nil {
			return nil, fmt.Errorf("resume %s: %w", l.ResumeFrom, err)
		}
	}
	id := NewRunID()
	d, err := CreateDir(l.Root, id, l.Script.Source)
	if err != nil {
		return nil, err
	}
	j := &Job{l: l, ID: id, Dir: d, cache: cache, info: RunInfo{ID: id, Name: l.Script.Meta.Name,
		Description: l.Script.Meta.Description, Args: l.Args, ResumedFrom: l.ResumeFrom, Status: "running", Started: l.Now()}}
	if err := d.WriteInfo(j.info); err != nil {
		d.Finish(j.info, nil)
		return nil, err
	}
	return j, nil
}

// Run runs the job to its end, writing its journal, output and result,
// and returns its run.json. It may be called once.
func (j *Job) Run(ctx context.Context) (RunInfo, Result, error) {
	opts := j.l.Options
	opts.Cache = j.cache
	opts.Record = func(e Entry) {
		if err := j.Dir.Record(e); err != nil {
			j.Dir.Output("warning: journal: " + err.Error())
		}
	}
	opts.Observer = func(e Event) {
		if line := OutputLine(e); line != "" {
			j.Dir.Output(line)
		}
		if j.l.OnEvent != nil {
			j.l.OnEvent(e)
		}
	}
	res, err := Run(ctx, j.l.Script, j.l.Args, j.l.Runner, opts)
	info := j.info
	info.Ended = j.l.Now()
	info.Agents, info.Cached, info.Failed, info.Usage = res.Agents, res.Cached, res.Failed, res.Usage
	switch {
	case err == nil:
		info.Status = "completed"
		var pretty any
		out := string(res.Value)
		if json.Unmarshal(res.Value, &pretty) == nil {
			if b, e := json.MarshalIndent(pretty, "", "  "); e == nil {
				out = string(b)
			}
		}
		j.Dir.Output("--- result ---\n" + out)
	case ctx.Err() != nil:
		info.Status, info.Error = "killed", context.Cause(ctx).Error()
		j.Dir.Output("--- stopped: " + info.Error)
	default:
		info.Status, info.Error = "failed", err.Error()
		j.Dir.Output("--- failed ---\n" + info.Error)
	}
	var value json.RawMessage
	if err == nil {
		value = res.Value
	}
	if ferr := j.Dir.Finish(info, value); ferr != nil && err == nil {
		err = fmt.Errorf("workflow run %s: %w", j.ID, ferr)
	}
	return info, res, err
}

// OutputLine renders an event as a line of the output file, or "" for
// one it leaves out (activity).
func OutputLine(e Event) string {
	name := e.Label
	switch e.Kind {
	case EventLog:
		return e.Text
	case EventPhase:
		return "== " + e.Text
	case EventQueued:
		if e.Cached {
			return fmt.Sprintf("[%d] %s: from the journal", e.Index, name)
		}
		return ""
	case EventStarted:
		return fmt.Sprintf("[%d] %s: started", e.Index, name)
	case EventDone:
		if e.Cached {
			return ""
		}
		return fmt.Sprintf("[%d] %s: done (%d tokens)", e.Index, name, e.Usage.Total())
	case EventFailed:
		return fmt.Sprintf("[%d] %s: failed: %s", e.Index, name, e.Err)
	}
	return ""
}
