package record

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/internal/inert"
	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/task"
)

// The steps of a remote agent's job a record keeps, in a line
//
//	{"type":"remote","remote":{"event":"submitted","id":"r...","description":"...","labels":["gpu"],"max_attempts":1,"time":"..."}}
//	{"type":"remote","remote":{"event":"started","id":"r...","worker":"lab2-gpu","attempt":1,"time":"..."}}
//	{"type":"remote","remote":{"event":"ended","id":"r...","worker":"lab2-gpu","attempt":1,"status":"completed","summary":"...","time":"..."}}
//
// so that a resumed session can tell its lead what became of them and
// take up the ones whose end it did not see.
const (
	RemoteSubmitted = "submitted"
	RemoteStarted   = "started"
	RemoteEnded     = "ended"
)

// MaxSummary bounds the result summary of an ended job, in bytes.
const MaxSummary = 2000

// Remote is the body of a remote line; which fields are set depends on
// Event.
type Remote struct {
	Event string `json:"event"` // submitted, started or ended
	ID    string `json:"id"`    // the job's id, which is its remote_agent task's id
	// submitted
	Description string   `json:"description,omitempty"`
	Labels      []string `json:"labels,omitempty"`
	Model       string   `json:"model,omitempty"`
	MaxAttempts int      `json:"max_attempts,omitempty"`
	// started and ended: the worker (the host's name in the queue) and
	// its attempt
	Worker  string `json:"worker,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// ended: completed, failed or killed, and the start of the result or
	// error
	Status  string `json:"status,omitempty"`
	Summary string `json:"summary,omitempty"`
	Time    string `json:"time,omitempty"`
}

// RemoteJob is what a record says of one remote job: its submission and
// the latest it heard of it.
type RemoteJob struct {
	ID, Description string
	Labels          []string
	Model           string
	MaxAttempts     int
	Submitted       string // the submission's time, RFC 3339
	Worker          string // "" until a worker is known
	Attempt         int
	Status          string // "" while no end is recorded
	Summary         string
}

// Open reports whether the record saw no end of j.
func (j RemoteJob) Open() bool { return j.Status == "" }

// Job returns j as the queue's job to take up again (remote.Client.Reattach):
// its id, description, labels, model and attempts; the prompt is not
// recorded (the conversation holds it).
func (j RemoteJob) Job() remote.Job {
	return remote.Job{ID: j.ID, Description: j.Description, Labels: j.Labels, Model: j.Model, MaxAttempts: j.MaxAttempts}
}

// Describe says in one line what the record knows of j, for the lead.
func (j RemoteJob) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", j.ID, j.Description)
	if len(j.Labels) > 0 {
		fmt.Fprintf(&b, " (labels %s)", strings.Join(j.Labels, ", "))
	}
	if j.Worker != "" {
		fmt.Fprintf(&b, " on worker %s", j.Worker)
		if j.Attempt > 1 {
			fmt.Fprintf(&b, " (attempt %d)", j.Attempt)
		}
	}
	if j.Open() {
		b.WriteString(": no end recorded")
		return b.String()
	}
	fmt.Fprintf(&b, ": %s", j.Status)
	if j.Summary != "" {
		fmt.Fprintf(&b, ": %s", strings.Join(strings.Fields(j.Summary), " "))
	}
	return b.String()
}

var remoteIDPattern = regexp.MustCompile(`^r[0-9a-z]{8}$`)

// addRemote applies a remote line to s.
func (s *File) addRemote(r *Remote) error {
	if r == nil {
		return errors.New("a remote line without its remote object")
	}
	if !remoteIDPattern.MatchString(r.ID) {
		return fmt.Errorf("remote job id %q: want r and 8 characters of [0-9a-z]", r.ID)
	}
	i := slices.IndexFunc(s.Remote, func(j RemoteJob) bool { return j.ID == r.ID })
	if r.Event == RemoteSubmitted {
		if i >= 0 {
			return fmt.Errorf("remote job %s submitted twice", r.ID)
		}
		if err := remote.CheckLabels(r.Labels); err != nil {
			return fmt.Errorf("remote job %s: %v", r.ID, err)
		}
		if r.MaxAttempts < 0 {
			return fmt.Errorf("remote job %s: max_attempts %d: want 0 or more", r.ID, r.MaxAttempts)
		}
		if len(r.Labels) == 0 {
			r.Labels = nil // [] and none are one
		}
		s.Remote = append(s.Remote, RemoteJob{ID: r.ID, Description: r.Description, Labels: r.Labels, Model: r.Model,
			MaxAttempts: r.MaxAttempts, Submitted: r.Time})
		return nil
	}
	if r.Event != RemoteStarted && r.Event != RemoteEnded {
		return fmt.Errorf("remote job %s: event %q: want %s, %s or %s", r.ID, r.Event, RemoteSubmitted, RemoteStarted, RemoteEnded)
	}
	if i < 0 {
		return fmt.Errorf("remote job %s %s before a line says it was submitted", r.ID, r.Event)
	}
	j := &s.Remote[i]
	if !j.Open() {
		return fmt.Errorf("remote job %s %s after its end (%s)", r.ID, r.Event, j.Status)
	}
	if r.Attempt < 0 {
		return fmt.Errorf("remote job %s: attempt %d: want 0 or more", r.ID, r.Attempt)
	}
	if r.Worker != "" {
		j.Worker = r.Worker
	}
	if r.Attempt != 0 {
		j.Attempt = r.Attempt
	}
	if r.Event == RemoteEnded {
		switch task.Status(r.Status) {
		case task.Completed, task.Failed, task.Killed:
		default:
			return fmt.Errorf("remote job %s: status %q: want completed, failed or killed", r.ID, r.Status)
		}
		j.Status, j.Summary = r.Status, r.Summary
	}
	return nil
}

// remoteLines are lines that parse to s's remote jobs: each job's
// submission, start and end.
func (s *File) remoteLines() []Line {
	var out []Line
	for _, j := range s.Remote {
		out = append(out, Line{Type: "remote", Remote: &Remote{Event: RemoteSubmitted, ID: j.ID, Description: j.Description,
			Labels: j.Labels, Model: j.Model, MaxAttempts: j.MaxAttempts, Time: j.Submitted}})
		if j.Worker != "" || j.Attempt != 0 {
			out = append(out, Line{Type: "remote", Remote: &Remote{Event: RemoteStarted, ID: j.ID, Worker: j.Worker, Attempt: j.Attempt}})
		}
		if !j.Open() {
			out = append(out, Line{Type: "remote", Remote: &Remote{Event: RemoteEnded, ID: j.ID, Status: j.Status, Summary: j.Summary}})
		}
	}
	return out
}

// RemoteSubmitted records job j, just submitted by the lead (its
// remote.ClientConfig.OnSubmit); FollowRemote then records its start and
// end.
func (l *Log) RemoteSubmitted(j remote.Job) {
	if l == nil {
		return
	}
	l.jobsMu.Lock()
	if l.jobs == nil {
		l.jobs = map[string]bool{}
	}
	l.jobs[j.ID] = true
	l.jobsMu.Unlock()
	l.write(Line{Type: "remote", Remote: &Remote{Event: RemoteSubmitted, ID: j.ID, Description: j.Description, Labels: j.Labels,
		Model: j.Model, MaxAttempts: j.MaxAttempts, Time: j.Submitted.UTC().Format(time.RFC3339Nano)}})
}

// FollowRemote records the start and end of each remote_agent task of reg
// whose job the record holds (submitted in this run, or in an earlier
// one, given as prev), until reg is closed or l is; Close waits for the
// lines of what reg said before. now stamps the lines.
func (l *Log) FollowRemote(reg *task.Registry, prev []RemoteJob, now func() time.Time) {
	if l == nil {
		return
	}
	l.jobsMu.Lock()
	if l.jobs == nil {
		l.jobs = map[string]bool{}
	}
	for _, j := range prev {
		l.jobs[j.ID] = true
	}
	sub := reg.Subscribe()
	l.subs = append(l.subs, sub)
	l.jobsMu.Unlock()
	l.wg.Go(func() {
		for {
			e, err := sub.Next(context.Background())
			if err != nil {
				return // the registry or the log is closed, and every event read
			}
			if e.State.Type != task.RemoteAgent || (e.Kind != task.EventStarted && e.Kind != task.EventTerminated) {
				continue
			}
			l.jobsMu.Lock()
			known := l.jobs[string(e.State.ID)]
			l.jobsMu.Unlock()
			if !known {
				continue // its submission failed: the queue never held it
			}
			l.write(Line{Type: "remote", Remote: remoteStep(e, now())})
		}
	})
}

// remoteStep is the remote line of a task's start or end.
func remoteStep(e task.Event, at time.Time) *Remote {
	r := &Remote{Event: RemoteStarted, ID: string(e.State.ID), Time: at.UTC().Format(time.RFC3339Nano)}
	d, _ := task.DetailAs[*task.Remote](e.State)
	if d != nil {
		r.Worker, r.Attempt = d.Worker, d.Attempt
	}
	if e.Kind != task.EventTerminated {
		return r
	}
	r.Event, r.Status = RemoteEnded, string(e.State.Status)
	if d != nil {
		r.Summary = d.Result
		if d.Error != "" {
			r.Summary = d.Error
		}
	}
	if r.Summary == "" && e.State.Status == task.Killed {
		r.Summary = "stopped by the lead"
	}
	r.Summary = clip(r.Summary, MaxSummary)
	return r
}

// clip cuts s to at most n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut-- // s[cut] continues a rune begun before: cut before that rune
	}
	return s[:cut] + " […]"
}

// ErrNoRemoteStore is why a resumed run cannot look up its jobs without
// the NATS store.
var ErrNoRemoteStore = errors.New("this run has no NATS store to look it up in: resume with the --store nats://... the session used")

// ResumeNote is what a resumed lead is told of its session's remote jobs
// (a system reminder): the ended ones with their status and summary, and
// for each one whose end the record did not see, whether reattach took it
// up again or why it could not.
func ResumeNote(jobs []RemoteJob, reattach func(RemoteJob) error) string {
	var b strings.Builder
	b.WriteString("<system-reminder>\nThis session was resumed. The remote agents it started before (from the session record):\n")
	for _, j := range jobs {
		b.WriteString("- " + inert.Tags(j.Describe())) // its description is the model's words
		if j.Open() {
			switch err := reattach(j); {
			case err == nil:
				b.WriteString("; re-attached: it was still queued or running, or ended while the session was away; you will be notified of its end as usual")
			case errors.Is(err, remote.ErrUnknownJob):
				b.WriteString("; unknown: the store holds no event of it (job events are kept 7 days, or this is another store); its result cannot be recovered: start it again if it is still needed")
			default:
				b.WriteString("; unknown: " + err.Error())
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("</system-reminder>")
	return b.String()
}
