package record

import (
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/schedule"
)

// Schedule records the session's schedule whole (a schedule's Save):
// the last such line is what --resume restores.
func (l *Log) Schedule(st schedule.State) {
	if l == nil {
		return
	}
	l.write(Line{Type: "schedule", Schedule: &st})
}

// addSchedule applies a schedule line: it replaces the schedule read
// so far, once its jobs are checked.
func (s *File) addSchedule(st *schedule.State) error {
	if st == nil {
		return errors.New("a schedule line without its schedule")
	}
	if len(st.Jobs) > schedule.MaxJobs {
		return fmt.Errorf("schedule: %d jobs, more than %d", len(st.Jobs), schedule.MaxJobs)
	}
	seen := map[string]bool{}
	for i, j := range st.Jobs {
		if _, err := schedule.Parse(j.Cron); err != nil {
			return fmt.Errorf("schedule job %d: %w", i+1, err)
		}
		if j.ID == "" || seen[j.ID] {
			return fmt.Errorf("schedule job %d: id %q is empty or repeated", i+1, j.ID)
		}
		seen[j.ID] = true
	}
	s.Schedule = st
	return nil
}
