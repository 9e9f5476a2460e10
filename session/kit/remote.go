package kit

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/transcript"
)

// RemoteJobs builds the agent of each job a remote worker takes.
type RemoteJobs struct {
	Run       Run
	Worker    string // the worker's name: its task folders and transcripts
	Cwd       string
	Model     llm.Model
	ModelName string // "" for the provider's default
	MaxTurns  int
	NoInstr   bool // --no-project-instructions
	Approver  *approve.Approver
	// Transcripts keeps each job's transcript; nil keeps none.
	Transcripts *Transcripts
}

// Do runs job j to its end on an agent of its own, with the remote role's
// prompt, the project instructions read afresh and the core tools; its
// background tasks end with it. progress hears each tool call.
func (r RemoteJobs) Do(ctx context.Context, j remote.Job, progress func(string, remote.Usage)) remote.Result {
	now := r.Run.Now
	if now == nil {
		now = time.Now
	}
	dir, err := task.OutputDir("", ProjectSlug(r.Cwd), "worker-"+r.Worker+"-"+j.ID)
	if err != nil {
		return remote.Result{Error: err.Error()}
	}
	reg := task.New(task.Config{Dir: dir})
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		reg.Close(cctx)
		PruneOutputDir(dir)
	}()
	// The job's spending by model goes back with its result; the lead
	// charges it to its session (remote.ClientConfig.Spent).
	meter := budget.NewMeter(budget.Config{})
	model := meter.Account(j.ID, budget.Limits{}).Model(r.Model)
	ac := r.Run.NewContext(r.Cwd, cmp.Or(r.ModelName, r.Model.Info().Model), r.NoInstr, r.Approver) // each job reads them afresh
	tools, sub := Tools(ToolOptions{Cwd: r.Cwd, Registry: reg, Model: model, ModelName: r.ModelName, Approver: r.Approver, Context: ac})
	treg, err := tool.NewRegistry(append(tools, sub)...)
	if err != nil {
		return remote.Result{Error: err.Error()}
	}
	system, err := ac.System(brief.RoleRemote, brief.Vars{}, "")
	if err != nil {
		return remote.Result{Error: err.Error()}
	}
	var ag *agent.Agent
	nested := ac.Nested(func(text string) { ag.Send(text) })
	var u remote.Usage
	var latestInput, output int64
	cfg := agent.Config{Model: model, ModelName: r.ModelName, System: system, Environment: ac.Environment, Tools: treg,
		MaxTurns: r.MaxTurns, Now: now, Approver: r.Approver, Hooks: ac.Hooks().ForAgent(j.ID, true),
		OnEvent: func(e agent.Event) {
			nested(e)
			switch e.Type {
			case agent.EventAssistant:
				if e.Usage != nil {
					latestInput, output = e.Usage.TotalInput(), output+e.Usage.OutputTokens
					u.TotalTokens = latestInput + output
				}
			case agent.EventToolUse:
				if e.Call != nil {
					u.ToolUses++
					progress("running "+e.Call.Name, u)
				}
			}
		}}
	if w := r.Transcripts.Writer(j.ID, transcript.KindRemote, ""); w != nil {
		cfg.Transcript = w
	}
	if cfg, err = ac.NarrowBySkills(cfg); err != nil {
		return remote.Result{Error: err.Error()}
	}
	ag, err = agent.New(cfg)
	if err != nil {
		return remote.Result{Error: err.Error()}
	}
	defer ag.Kill()
	res, err := ag.Run(ctx, j.Prompt)
	u.Duration = res.Duration
	if err != nil {
		return remote.Result{Error: err.Error(), Usage: u, Models: modelUsage(meter)}
	}
	text := strings.TrimSpace(res.Text)
	if res.StopReason == agent.StopMaxTurns {
		text += "\n\n[The agent stopped at its turn limit before finishing.]"
	}
	return remote.Result{Text: text, Usage: u, Models: modelUsage(meter)}
}

// modelUsage is what a job's meter counted, by model, in model order.
func modelUsage(m *budget.Meter) []remote.ModelUsage {
	by := m.ByModel()
	out := make([]remote.ModelUsage, 0, len(by))
	for _, name := range slices.Sorted(maps.Keys(by)) {
		out = append(out, remote.ModelUsage{Model: name, Usage: by[name].Usage, Calls: by[name].Calls})
	}
	return out
}
