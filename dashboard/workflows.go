package dashboard

import (
	"net/http"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/task"
)

// WorkflowRun is one workflow run of a lead's session (Config.Workflows):
// its state in run.json and its progress, phases and agents.
type WorkflowRun struct {
	Status  string // running, completed, failed, killed
	Started time.Time
	Detail  *task.Workflow
}

// workflowView is a run as the team page shows it; every string a script
// or an agent wrote went through termtext.
type workflowView struct {
	ID, Name, Status, Phase, Error, Started, Tokens string
	Done, Total                                     int
	Phases                                          []wfPhaseView
	Agents                                          []wfAgentView
}

type wfPhaseView struct {
	Title                          string
	Pending, Running, Done, Failed int
	Current                        bool
}

type wfAgentView struct {
	Index                                 int
	Label, Phase, State, Tokens, Activity string
	AgentID                               string // its transcript's name, "" before it started
	Cached                                bool
}

// workflows returns the views of the workflow runs of session, nil when
// there are none or Config.Workflows cannot read them.
func (s *Server) workflows(session string) []workflowView {
	if s.cfg.Workflows == nil || session == "" {
		return nil
	}
	runs, ok := s.cfg.Workflows(session)
	if !ok {
		return nil
	}
	var out []workflowView
	for _, r := range runs {
		w := r.Detail
		if w == nil {
			continue
		}
		L := termtext.Line
		v := workflowView{ID: L(w.RunID), Name: L(w.Name), Status: L(r.Status), Phase: L(w.Phase), Error: termtext.Clean(w.Error), Total: len(w.Agents)}
		if !r.Started.IsZero() {
			v.Started = r.Started.UTC().Format(time.RFC3339)
		}
		var sum int64
		for _, a := range w.Agents {
			sum += a.Tokens
			if a.State == "done" {
				v.Done++
			}
			v.Agents = append(v.Agents, wfAgentView{Index: a.Index, Label: L(a.Label), Phase: L(a.Phase), State: L(a.State),
				Tokens: grouped(a.Tokens), Activity: L(a.Activity), Cached: a.Cached, AgentID: L(a.AgentID)})
		}
		v.Tokens = grouped(max(sum, w.Usage.TotalTokens))
		for _, p := range w.Phases {
			v.Phases = append(v.Phases, wfPhaseView{Title: L(p.Title), Pending: p.Pending, Running: p.Running, Done: p.Done, Failed: p.Failed,
				Current: p.Title == w.Phase && r.Status == "running"})
		}
		out = append(out, v)
	}
	return out
}

// workflowAgent serves a workflow agent's page: its row and its
// transcript in the lead's session (/team/{team}/workflow/{run}/agent/{index}).
func (s *Server) workflowAgent(w http.ResponseWriter, r *http.Request) {
	v, err := s.load(r.Context(), r.PathValue("team"))
	if err != nil {
		s.fail(w, err)
		return
	}
	run, idx := r.PathValue("run"), r.PathValue("index")
	for _, wv := range s.workflows(v.session) {
		if wv.ID != termtext.Line(run) {
			continue
		}
		for _, a := range wv.Agents {
			if strconv.Itoa(a.Index) != idx {
				continue
			}
			p := memberPage{memberView: memberView{Name: a.Label, State: a.State + " · workflow " + wv.Name + " · " + a.Phase}, Team: v.Name}
			switch {
			case a.AgentID == "":
				p.Missing = "This agent has no transcript in this session (it has not started, or its answer came from an earlier run's journal)."
			case s.cfg.Transcript == nil:
				p.Missing = "This dashboard reads no transcripts."
			default:
				text, ok := s.cfg.Transcript(v.session, a.AgentID)
				if !ok {
					p.Missing = "No transcript of " + a.AgentID + " is reachable from here."
					break
				}
				if len(text) > MaxTranscript {
					text = "…\n" + text[len(text)-MaxTranscript:]
				}
				p.Transcript = termtext.Clean(text)
			}
			s.render(w, "member.html", p)
			return
		}
	}
	http.Error(w, "dashboard: no agent "+termtext.Line(idx)+" in workflow run "+termtext.Line(run)+" of team "+v.Name, http.StatusNotFound)
}
