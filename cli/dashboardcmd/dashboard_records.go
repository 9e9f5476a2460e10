package dashboardcmd

import (
	"path/filepath"

	"github.com/troupe-dev/troupe/budget/ledger"
	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/transcript"
	"github.com/troupe-dev/troupe/workflow"
)

// The dashboard's views of a session's records in the local home: what
// its agents spent (the usage ledger) and what each did (transcripts).

// sessionSpending returns the dashboard's view of a session's ledger in
// the local home: each agent's tokens and cost; false when the session
// has no ledger here.
func (a *app) sessionSpending() func(session string) (map[string]dashboard.Spend, bool) {
	home, err := a.Home()
	if err != nil {
		return nil
	}
	return func(session string) (map[string]dashboard.Spend, bool) {
		if !transcript.ValidSession(session) {
			return nil, false
		}
		es, err := ledger.Read(transcript.Dir(home, session))
		if len(es) == 0 {
			return nil, false
		}
		if err != nil {
			a.WarnOnce(err.Error()) // a malformed line: what came before it counts
		}
		out := map[string]dashboard.Spend{}
		for name, sp := range ledger.Summarize(es).ByAgent {
			out[name] = dashboard.Spend{Tokens: sp.Tokens(), USD: sp.USD, Priced: len(sp.Unpriced) == 0}
		}
		return out, true
	}
}

// sessionTranscript returns the dashboard's view of an agent's transcript
// in a session of the local home, rendered as `troupe transcript` prints
// it; false when there is none here.
func (a *app) sessionTranscript() func(session, agent string) (string, bool) {
	home, err := a.Home()
	if err != nil {
		return nil
	}
	return func(session, agent string) (string, bool) {
		return transcript.RenderAgent(home, session, agent, termtext.Clean)
	}
}

// maxWorkflowRuns bounds the runs the team page shows (the newest).
const maxWorkflowRuns = 20

// sessionWorkflows returns the dashboard's view of a session's workflow
// runs in the local home (<home>/sessions/<session>/workflows), newest
// first, each read from its folder (workflow.Snapshot); false when the
// session has none here.
func (a *app) sessionWorkflows() func(session string) ([]dashboard.WorkflowRun, bool) {
	home, err := a.Home()
	if err != nil {
		return nil
	}
	return func(session string) ([]dashboard.WorkflowRun, bool) {
		if !transcript.ValidSession(session) {
			return nil, false
		}
		root := filepath.Join(transcript.Dir(home, session), "workflows")
		infos, err := workflow.ListRuns(root)
		if err != nil {
			a.WarnOnce(err.Error())
		}
		if len(infos) == 0 {
			return nil, false
		}
		var out []dashboard.WorkflowRun
		for _, ri := range infos[:min(len(infos), maxWorkflowRuns)] {
			info, w, err := workflow.Snapshot(filepath.Join(root, ri.ID))
			if err != nil {
				a.WarnOnce(err.Error())
			}
			if w != nil {
				out = append(out, dashboard.WorkflowRun{Status: info.Status, Started: info.Started, Detail: w})
			}
		}
		return out, len(out) > 0
	}
}
