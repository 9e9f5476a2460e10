package streamjson

import (
	"io"
	"time"

	"github.com/troupe-dev/troupe/schedule"
)

// streamSchedule is the stream-json line of a schedule change: every
// job and the wakeup, and when the next firing is due.
type streamSchedule struct {
	Type      string           `json:"type"`
	Subtype   string           `json:"subtype"` // "schedule"
	SessionID string           `json:"session_id"`
	Jobs      []schedule.Job   `json:"jobs"`
	Wakeup    *schedule.Wakeup `json:"wakeup,omitempty"`
	NextFire  *time.Time       `json:"next_fire,omitempty"`
}

// streamFire is the stream-json line of a firing that reached the lead.
type streamFire struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"` // "scheduled_fire"
	SessionID string `json:"session_id"`
	schedule.Firing
}

// Schedule writes a schedule change (stream-json only).
func (e *Writer) Schedule(st schedule.State) {
	if e.format != "stream-json" {
		return
	}
	line := streamSchedule{Type: "system", Subtype: "schedule", SessionID: e.session, Jobs: st.Jobs, Wakeup: st.Wakeup}
	if line.Jobs == nil {
		line.Jobs = []schedule.Job{}
	}
	if t := schedule.Next(st); !t.IsZero() {
		line.NextFire = &t
	}
	e.line(line)
}

// Fired writes a firing that reached the lead: a stream-json line, or in
// the other formats its label on notice (stderr), so a person watching
// a long headless run sees why the lead works again.
func (e *Writer) Fired(f schedule.Firing, notice io.Writer) {
	if e.format == "stream-json" {
		e.line(streamFire{Type: "system", Subtype: "scheduled_fire", SessionID: e.session, Firing: f})
		return
	}
	if notice != nil {
		e.Notice(notice, "troupe: "+f.Label())
	}
}
