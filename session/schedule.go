package session

import (
	"github.com/troupe-dev/troupe/schedule"
)

// clock is the session's side of its schedule (package schedule): the
// firings held while the lead's turn runs. Its fields are guarded by
// Session.mu.
type clock struct {
	sc   *schedule.Schedule
	held []schedule.Firing // came due while the lead was in a turn
}

// SetSchedule hands the session its schedule, whose Fire is
// Session.Scheduled: a headless Run then stays up while it has something
// to fire.
func (s *Session) SetSchedule(sc *schedule.Schedule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock.sc = sc
}

// Schedule returns the session's schedule, nil without one.
func (s *Session) Schedule() *schedule.Schedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock.sc
}

// scheduled reports whether the schedule has something still to fire.
func (s *Session) scheduled() bool {
	sc := s.Schedule()
	return sc != nil && sc.Pending()
}

// Scheduled is the schedule's Fire: the firing reaches the lead as input
// at a turn boundary, never inside a turn. Between turns it is sent now
// (a waiting run, or Serve, takes it up); during a turn it is held until
// the turn ends. Each firing that reaches the lead is a KindScheduled
// event; its text is wrapped (schedule.Firing.Text) so the model knows
// no one typed it.
func (s *Session) Scheduled(f schedule.Firing) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.seat == nil || s.seat.inTurn {
		s.clock.held = append(s.clock.held, f)
		s.mu.Unlock()
		return
	}
	s.deliverLocked(f)
	s.mu.Unlock()
	s.signal()
}

// ScheduleChanged reports the schedule's new state (a job created,
// deleted or fired, the wakeup set or spent) as a KindSchedule event; a
// schedule's Save calls it.
func (s *Session) ScheduleChanged(st schedule.State) {
	s.publish(Event{Kind: KindSchedule, Schedule: &st})
}

// releaseLocked hands the firings held during a turn to the lead, as
// that turn ends: the run going on takes them as its next input. s.mu
// is held.
func (s *Session) releaseLocked() {
	if len(s.clock.held) == 0 || s.seat == nil || s.seat.inTurn {
		return
	}
	for _, f := range s.clock.held {
		s.deliverLocked(f)
	}
	s.clock.held = nil
	s.signal()
}

// deliverLocked sends f to the foreground lead and reports it. s.mu is
// held, so that a run cannot end between the send and its look at the
// lead's input.
func (s *Session) deliverLocked(f schedule.Firing) {
	s.seat.ag.Send(f.Text())
	s.publish(Event{Kind: KindScheduled, Text: f.Label(), Firing: &f})
}
