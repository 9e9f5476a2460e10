package dashboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// MaxTimeline bounds the messages a team page shows, newest kept.
const MaxTimeline = 300

// teamView is everything the team page shows, read from the stores at one
// moment. Every string an agent wrote is passed through termtext first;
// html/template escapes it on output.
type teamView struct {
	Name, Description string
	Members           []memberView
	Columns           []column
	Messages          []messageView
	Pending           []pendingView
	Problems          []string       // stores that could not be read in full
	Spent             string         // the session's tokens and cost, "" when unknown (spend.go)
	Workflows         []workflowView // the lead session's workflow runs (workflows.go)
	session           string         // the lead's session id
	Control           bool
}

type memberView struct {
	Name, Color, State, Model, Backend string
	Task                               string // "#3 subject", or ""
	TaskID                             string
	LastActivity                       string // RFC 3339, or ""
	Spent                              string // its tokens and cost, "" when unknown
}

type column struct {
	Title string
	Tasks []taskView
}

type taskView struct {
	ID, Subject, Owner, Active string
	BlockedBy, Blocks          []string // ids of open tasks only for BlockedBy
}

type messageView struct {
	ID, Time, From, To, Color, Kind, Words string
}

type pendingView struct {
	RequestID, From, Action, Tool string
	// Signed: the asker is a pane teammate, which takes only a verdict
	// its lead signed; the page cannot answer it.
	Signed bool
	// Questions is set when the request is a question to the person
	// (AskUserQuestion, docs/ask.md), answered by choosing.
	Questions []questionView
}

// questionView is one question of a pending AskUserQuestion; its text
// is sanitized (termtext) before the template escapes it.
type questionView struct {
	N                int // 1-based, names its inputs
	Question, Header string
	Multi            bool
	Options          []optionView
}

type optionView struct{ Label, Description, Preview string }

// questionViews returns the questions of input, nil when it holds none.
func questionViews(input []byte) []questionView {
	in, err := ask.Parse(input)
	if err != nil {
		return nil
	}
	out := make([]questionView, len(in.Questions))
	for i, q := range in.Questions {
		qv := questionView{N: i + 1, Question: termtext.Clean(q.Question), Header: termtext.Line(q.Header), Multi: q.MultiSelect}
		for _, o := range q.Options {
			qv.Options = append(qv.Options, optionView{Label: termtext.Line(o.Label), Description: termtext.Clean(o.Description), Preview: termtext.Clean(o.Preview)})
		}
		out[i] = qv
	}
	return out
}

// load reads the team's current state from the stores.
func (s *Server) load(ctx context.Context, name string) (teamView, error) {
	cfg, err := s.cfg.Teams.Get(ctx, name)
	if err != nil {
		return teamView{}, err
	}
	v := teamView{Name: termtext.Line(cfg.Name), Description: termtext.Clean(cfg.Description), Control: s.cfg.Control}

	entries, err := s.cfg.Tasks.List(ctx, cfg.Name)
	if err != nil {
		var ce *tasklist.CorruptError
		if !errors.As(err, &ce) {
			return teamView{}, fmt.Errorf("list tasks of %s: %w", cfg.Name, err)
		}
		v.Problems = append(v.Problems, termtext.Line(err.Error()))
	}
	tasks := make([]tasklist.Task, len(entries))
	for i, e := range entries {
		tasks[i] = e.Task
	}
	v.Columns = board(tasks)

	// Every inbox, merged into one timeline; the newest activity per sender.
	var msgs []messageView
	last := map[string]time.Time{}
	answered := map[string]bool{} // permission request ids with a response
	signed := map[string]bool{}   // pane teammates: only a signed response answers them
	for _, mem := range cfg.Members {
		signed[mem.Name] = mem.InPane()
	}
	type request struct {
		m mailbox.Message
		f mailbox.PermissionRequest
	}
	var requests []request
	for _, mem := range cfg.Members {
		inbox, err := s.cfg.Mail.Read(ctx, cfg.Name, mem.Name, false)
		if err != nil {
			if ctx.Err() != nil {
				return teamView{}, ctx.Err()
			}
			v.Problems = append(v.Problems, termtext.Line(fmt.Sprintf("inbox of %s: %v", mem.Name, err)))
			continue
		}
		for _, m := range inbox {
			if m.Timestamp.After(last[m.From]) {
				last[m.From] = m.Timestamp
			}
			kind, words := Describe(m.From, mem.Name, m.Text)
			switch f, _ := mailbox.Decode(m.Text); f := f.(type) {
			case mailbox.PermissionResponse:
				if _, sig := m.Extra[mailbox.LeadSigKey]; sig || !signed[mem.Name] {
					answered[f.RequestID] = true
				}
			case mailbox.PermissionRequest:
				if mem.Name == team.LeadName {
					requests = append(requests, request{m, f})
				}
			}
			msgs = append(msgs, messageView{ID: termtext.Line(m.ID), Time: m.Timestamp.UTC().Format(time.RFC3339Nano),
				From: termtext.Line(m.From), To: termtext.Line(mem.Name), Color: safeColor(m.Color),
				Kind: kind, Words: termtext.Clean(words)})
		}
	}
	slices.SortStableFunc(msgs, func(a, b messageView) int { return strings.Compare(a.Time, b.Time) })
	if len(msgs) > MaxTimeline {
		msgs = msgs[len(msgs)-MaxTimeline:]
	}
	slices.Reverse(msgs) // newest first
	v.Messages = msgs
	for _, r := range requests {
		if !answered[r.f.RequestID] {
			pv := pendingView{RequestID: termtext.Line(r.f.RequestID), From: termtext.Line(r.m.From), Signed: signed[r.m.From],
				Tool: termtext.Line(r.f.ToolName), Action: termtext.Clean(Action(r.f.ToolName, r.f.Input, r.f.Description))}
			if r.f.ToolName == ask.ToolName {
				pv.Questions = questionViews(r.f.Input)
			}
			v.Pending = append(v.Pending, pv)
		}
	}

	v.session = cfg.LeadSessionID
	v.Workflows = s.workflows(cfg.LeadSessionID)
	spent := s.spending(cfg.LeadSessionID)
	if len(spent) > 0 {
		v.Spent = total(spent).String()
	}
	for _, mem := range cfg.Members {
		mv := memberView{Name: termtext.Line(mem.Name), Color: safeColor(mem.Color), Model: termtext.Line(mem.Model),
			Backend: termtext.Line(mem.BackendType), State: "idle"}
		if mem.Active() {
			mv.State = "working"
		}
		if string(mem.Extra[swarm.StatusKey]) == `"`+swarm.StatusDead+`"` {
			mv.State = "dead"
		}
		if mem.IsLead() {
			mv.State = "lead"
		}
		for _, t := range tasks {
			if t.Owner == mem.Name && t.Status == tasklist.StatusInProgress {
				mv.TaskID, mv.Task = termtext.Line(t.ID), termtext.Line(t.Subject)
				break
			}
		}
		if t, ok := last[mem.Name]; ok {
			mv.LastActivity = t.UTC().Format(time.RFC3339)
		}
		name := mem.Name
		if mem.IsLead() {
			name = "lead" // the lead's agent in its session's records
		}
		if sp, ok := spent[name]; ok {
			mv.Spent = sp.String()
		}
		v.Members = append(v.Members, mv)
	}
	return v, nil
}

// board sorts tasks into columns by status.
func board(tasks []tasklist.Task) []column {
	cols := []column{{Title: "Pending"}, {Title: "In progress"}, {Title: "Completed"}}
	open := map[string]bool{}
	for _, t := range tasks {
		if t.Status != tasklist.StatusCompleted {
			open[t.ID] = true
		}
	}
	for _, t := range tasks {
		tv := taskView{ID: termtext.Line(t.ID), Subject: termtext.Line(t.Subject), Owner: termtext.Line(t.Owner),
			Active: termtext.Line(t.ActiveForm), Blocks: lines(t.Blocks)}
		for _, b := range t.BlockedBy {
			if open[b] {
				tv.BlockedBy = append(tv.BlockedBy, termtext.Line(b))
			}
		}
		switch t.Status {
		case tasklist.StatusInProgress:
			cols[1].Tasks = append(cols[1].Tasks, tv)
		case tasklist.StatusCompleted:
			cols[2].Tasks = append(cols[2].Tasks, tv)
		default:
			cols[0].Tasks = append(cols[0].Tasks, tv)
		}
	}
	return cols
}

func lines(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = termtext.Line(s)
	}
	return out
}

// safeColor keeps a member color only when it is a plain name (team.Colors
// are words like "blue"), so it can be used as a CSS class.
func safeColor(c string) string {
	if c == "" || len(c) > 20 {
		return ""
	}
	for _, r := range c {
		if (r < 'a' || r > 'z') && r != '-' {
			return ""
		}
	}
	return c
}
