package agenttool_test

import (
	"context"

	coreagent "github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/filetool"
	"github.com/troupe-dev/troupe/tool/tasktool"
)

// coreToolList is how a session wires the tools: the file tools, Bash with
// background shells in reg, TaskOutput, TaskStop, and Agent, whose
// sub-agents get the same tools (minus Agent) with a Bash of their own, so
// that their background shells die with them.
func coreToolList(cwd string, reg *task.Registry, model llm.Model, modelName string, approver coreagent.Approver) []tool.Tool {
	newBash := func(agentID string) tool.Tool {
		return bash.New(bash.Config{Dir: cwd,
			Background: tasktool.BashBackground(reg, tasktool.BashOptions{AgentID: agentID, Dir: cwd})})
	}
	var at *agenttool.Tool // set below, before any call: named agents for TaskStop and TaskOutput
	byName := func(name string) (task.ID, bool) { return at.Lookup(name) }
	base := append(filetool.All(filetool.Config{Root: cwd}), newBash(""),
		tasktool.NewOutput(tasktool.Config{Registry: reg, Resolve: byName}), tasktool.NewStop(reg, byName))
	parent, _ := tool.NewRegistry(base...) // names are unique
	at = agenttool.New(agenttool.Config{Tools: parent, Registry: reg,
		Factory: func(_ context.Context, s agenttool.Spec) (coreagent.Config, error) {
			var ts []tool.Tool
			for _, name := range s.Tools.Names() {
				t, _ := s.Tools.Get(name)
				if name == "Bash" {
					t = newBash(s.AgentID)
				}
				ts = append(ts, t)
			}
			tools, err := tool.NewRegistry(ts...)
			if err != nil {
				return coreagent.Config{}, err
			}
			return coreagent.Config{Model: model, ModelName: modelName, Tools: tools, Approver: approver,
				System: "You are a " + s.Type + " sub-agent. Do the task you are given, then reply with a concise report of what you found or did: it is all the caller sees."}, nil
		}})
	return append(base, at, agenttool.NewSendMessage(at))
}

func Example_wiring() {
	reg := task.New(task.Config{Dir: "/tmp/troupe-example/tasks"})
	defer reg.Close(context.Background())
	_ = coreToolList("/tmp", reg, nil, "", coreagent.AllowAll{})
}
