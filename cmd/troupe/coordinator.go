package main

import (
	"context"
	"path/filepath"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/coordinator"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/fs"

	agenttool "github.com/troupe-dev/troupe/tool/agent"
	tasktool "github.com/troupe-dev/troupe/tool/task"
)

// coordinatorSource is the Source of the allow rules coordinator mode
// adds: the lead's tools, and the scratchpad for workers.
const coordinatorSource = "coordinator"

// coordinatorSetup returns the tools and system prompt of a coordinator
// lead (`troupe -p --coordinator`, or TROUPE_COORDINATOR_MODE=1): Agent
// (workers always in the background), SendMessage and TaskStop. Workers
// get the normal tool set minus coordinator.Internal, and the session's
// scratchpad, created beside the task output folder, which they may read
// and write without asking. custom, when set, replaces the system prompt.
// The returned approver is the lead's: approver, plus allow rules for its
// three tools, which only start, continue and stop workers (each worker's
// own calls pass the workers' approver).
func coordinatorSetup(cwd, session string, reg *task.Registry, model llm.Model, modelName string, approver *approve.Approver, custom string) ([]tool.Tool, string, *approve.Approver, error) {
	taskDir, err := task.OutputDir("", projectSlug(cwd), session) // the folder newBackground uses
	if err != nil {
		return nil, "", nil, err
	}
	scratch, err := coordinator.Scratchpad(taskDir)
	if err != nil {
		return nil, "", nil, err
	}
	workerApprover := scratchpadApprover(approver, scratch)
	newBash := func(agentID string) tool.Tool {
		return bash.New(bash.Config{Dir: cwd,
			Background: tasktool.BashBackground(reg, tasktool.BashOptions{AgentID: agentID, Dir: cwd})})
	}
	var at *agenttool.Tool // set below, before any call
	byName := func(name string) (task.ID, bool) { return at.Lookup(name) }
	stop := tasktool.NewStop(reg, byName)
	workerTools := append(fs.All(fs.Config{Root: cwd}), newBash(""),
		tasktool.NewOutput(tasktool.Config{Registry: reg, Resolve: byName}), stop)
	parent, err := tool.NewRegistry(workerTools...)
	if err != nil {
		return nil, "", nil, err
	}
	at = agenttool.New(agenttool.Config{Tools: parent, Registry: reg, Deny: coordinator.Internal,
		AsyncAllow: parent.Names(), DefaultBackground: true,
		Factory: func(_ context.Context, s agenttool.Spec) (agent.Config, error) {
			var ts []tool.Tool
			for _, name := range s.Tools.Names() {
				t, _ := s.Tools.Get(name)
				if name == "Bash" {
					t = newBash(s.AgentID) // its background shells end with the worker
				}
				ts = append(ts, t)
			}
			tools, err := tool.NewRegistry(ts...)
			if err != nil {
				return agent.Config{}, err
			}
			return agent.Config{Model: model, ModelName: modelName, Tools: tools, Approver: workerApprover,
				System: coordinator.WorkerSystem(s.Type, scratch)}, nil
		}})
	system := custom
	if system == "" {
		system = coordinator.SystemPrompt(coordinator.Context{WorkerTools: agenttool.FilterTools(parent, coordinator.Internal).Names(), Scratchpad: scratch})
	}
	return []tool.Tool{at, agenttool.NewSendMessage(at), stop}, system, withAllow(approver, coordinator.LeadTools...), nil
}

// withAllow returns a copy of ap (nil stays nil) whose policy also allows
// the rules given (valid rule texts). They are allow rules, so deny and
// ask rules, plan mode and dontAsk still win; nothing else changes.
func withAllow(ap *approve.Approver, rules ...string) *approve.Approver {
	if ap == nil {
		return nil
	}
	w := *ap
	w.Policy.Allow = append([]permission.Rule(nil), ap.Policy.Allow...)
	for _, text := range rules {
		r, err := permission.ParseRule(text)
		if err != nil {
			continue // such as a path no rule can name: the call is asked as usual
		}
		r.Source = coordinatorSource
		w.Policy.Allow = append(w.Policy.Allow, r)
	}
	return &w
}

// scratchpadApprover returns a copy of ap that also allows reading and
// editing below the scratchpad folder.
func scratchpadApprover(ap *approve.Approver, scratch string) *approve.Approver {
	// "//" anchors an absolute path; Edit rules cover Write and Edit, Read
	// rules Read, Glob and Grep.
	pat := "(/" + filepath.ToSlash(scratch) + "/**)"
	return withAllow(ap, "Read"+pat, "Edit"+pat)
}
