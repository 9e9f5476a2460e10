package task

import (
	"reflect"
	"time"

	"github.com/troupe-dev/troupe/llm"
)

// Detail is the type-specific data of a task. The types of this package
// (*Shell, *Agent, *Remote, *Teammate, *Workflow, *Monitor, *DreamDetail)
// cover every Type; another package may add its own. A Detail must be a
// pointer, treated as immutable once stored: State equality compares it
// by identity, which is what makes a no-op update cheap to detect.
type Detail interface {
	TaskType() Type
}

// Resumer is implemented by a Detail that carries UI-side state which a
// re-registration (a resume) must keep: Resume returns the new detail with
// that state taken from prev.
type Resumer interface {
	Resume(prev Detail) Detail
}

// checkDetail reports whether d fits a task of type t.
func checkDetail(t Type, d Detail) error {
	if d == nil {
		return nil
	}
	if d.TaskType() != t {
		return fmtErr(ErrBadDetail, "detail of type %s on a %s task", d.TaskType(), t)
	}
	if k := reflect.TypeOf(d).Kind(); k != reflect.Pointer {
		return fmtErr(ErrBadDetail, "detail %T is not a pointer", d)
	}
	return nil
}

// Shell is the detail of a local_bash task.
type Shell struct {
	Command string
	AgentID string // the agent that started it, for KillForAgent; "" for the lead
	Kind    string // "bash" or "monitor": a UI variant
	PID     int    // the process group leader
	// Exited is set once the shell exited; ExitCode is then its code
	// (128+n for signal n).
	Exited      bool
	ExitCode    int
	Interrupted bool   // stopped on purpose
	Stalled     bool   // the stall watchdog told the model
	Error       string // why it could not start
	// Tail is the end of its output once it exited (NotificationTail),
	// for its notification.
	Tail string
}

// TaskType implements Detail.
func (*Shell) TaskType() Type { return LocalBash }

// With returns a copy of sh changed by f.
func (sh *Shell) With(f func(*Shell)) *Shell { c := *sh; f(&c); return &c }

// Usage is what an agent task used.
type Usage struct {
	TotalTokens int64
	ToolUses    int
	Duration    time.Duration
}

// Agent is the detail of a local_agent task.
type Agent struct {
	AgentID   string
	Prompt    string
	AgentType string
	Model     string
	Result    string // the final text
	Error     string
	Usage     Usage
	// UI-side state, kept across a resume.
	Messages        []llm.Message
	PendingMessages []string
	DiskLoaded      bool
}

// TaskType implements Detail.
func (*Agent) TaskType() Type { return LocalAgent }

// With returns a copy of a changed by f.
func (a *Agent) With(f func(*Agent)) *Agent { c := *a; f(&c); return &c }

// Resume implements Resumer: messages, pending messages and the disk-loaded
// flag come from prev.
func (a *Agent) Resume(prev Detail) Detail {
	p, ok := prev.(*Agent)
	if !ok {
		return a
	}
	return a.With(func(c *Agent) {
		c.Messages, c.PendingMessages, c.DiskLoaded = p.Messages, p.PendingMessages, p.DiskLoaded
	})
}

// Remote is the detail of a remote_agent task.
type Remote struct {
	RemoteType string // remote-agent, ultraplan, ultrareview, autofix-pr, background-pr
	SessionID  string
	Command    string
	Title      string
	PollStart  time.Time
	// Worker is the worker running it and Attempt its attempt (1 for the
	// first run); Progress is the last progress line.
	Worker   string
	Attempt  int
	Progress string
	// Result and Error are its outcome, Usage what it spent so far.
	Result string
	Error  string
	Usage  Usage
}

// TaskType implements Detail.
func (*Remote) TaskType() Type { return RemoteAgent }

// Teammate is the detail of an in_process_teammate task.
type Teammate struct {
	AgentID           string // name@team
	AgentName         string
	TeamName          string
	Color             string // the teammate's color in the team file
	Prompt            string
	Model             string
	Idle              bool
	ShutdownRequested bool
	AwaitingApproval  bool
	Usage             Usage
	// Recent are its last few activities in plain words ("Reading a.go",
	// "Running go test ./..."), oldest first; in-process teammates only.
	Recent []string
	// UI-side state, kept across a resume.
	Messages        []llm.Message
	PendingMessages []string
}

// TaskType implements Detail.
func (*Teammate) TaskType() Type { return InProcessTeammate }

// Resume implements Resumer.
func (tm *Teammate) Resume(prev Detail) Detail {
	p, ok := prev.(*Teammate)
	if !ok {
		return tm
	}
	c := *tm
	c.Messages, c.PendingMessages = p.Messages, p.PendingMessages
	return &c
}

// Workflow is the detail of a local_workflow task (package workflow).
type Workflow struct {
	Name  string
	RunID string // wf_...
	Dir   string // the run's folder: script, journal, log, result
	// Phases are the script's phases with their agents' counts; Agents
	// every agent() call so far, in call order.
	Phases []WorkflowPhase
	Agents []WorkflowAgent
	Phase  string // the current phase
	// Result is the script's return value as JSON once it completed;
	// Error why it failed.
	Result string
	Error  string
	Usage  Usage
}

// WorkflowPhase is a workflow phase and how many of its agents are in
// each state.
type WorkflowPhase struct {
	Title   string `json:"title"`
	Pending int    `json:"pending"`
	Running int    `json:"running"`
	Done    int    `json:"done"`
	Failed  int    `json:"failed"`
}

// WorkflowAgent is one agent() call of a workflow.
type WorkflowAgent struct {
	Index    int       `json:"index"`
	Label    string    `json:"label"`
	Phase    string    `json:"phase,omitempty"`
	State    string    `json:"state"`              // pending, running, done, failed
	Cached   bool      `json:"cached,omitempty"`   // answered from an earlier run's journal
	AgentID  string    `json:"agent_id,omitempty"` // names its transcript in the session, once it started
	Tokens   int64     `json:"tokens"`
	Activity string    `json:"activity,omitempty"` // its last activity or error
	At       time.Time `json:"at"`
}

// With returns a copy of w changed by f; the slices are copied too.
func (w *Workflow) With(f func(*Workflow)) *Workflow {
	c := *w
	c.Phases = append([]WorkflowPhase(nil), w.Phases...)
	c.Agents = append([]WorkflowAgent(nil), w.Agents...)
	f(&c)
	return &c
}

// TaskType implements Detail.
func (*Workflow) TaskType() Type { return LocalWorkflow }

// DreamDetail is the detail of a dream task.
type DreamDetail struct {
	Phase             string // starting, updating
	SessionsReviewing int
	FilesTouched      []string
	PriorMtime        time.Time
}

// TaskType implements Detail.
func (*DreamDetail) TaskType() Type { return Dream }

// DetailAs returns s.Detail as a D.
func DetailAs[D Detail](s State) (D, bool) {
	d, ok := s.Detail.(D)
	return d, ok
}
