package main

import (
	"context"
	"errors"
	"strings"

	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/session/record"
)

// resumeRemote records the starts and ends of the run's remote jobs, and
// on --resume tells the lead what became of those of the earlier runs:
// the ended ones with their status and result summary; the ones whose
// end the record did not see (the lead was killed) taken up again when
// the store still holds their events (their end then comes as a task
// notification), or reported unknown with the reason.
func (a *app) resumeRemote(ctx context.Context, lr *leadRun, prev *record.File) {
	var jobs []record.RemoteJob
	if prev != nil {
		jobs = prev.Remote
	}
	lr.rec.FollowRemote(lr.bg.reg, jobs, a.Now)
	if len(jobs) == 0 {
		return
	}
	runner, _ := lr.bg.remote.(kit.RemoteSubmitter)
	lr.bg.sess.Deliver(remoteResumeNote(jobs, func(j record.RemoteJob) error {
		if runner.Client == nil {
			return errNoRemoteStore
		}
		_, err := runner.Client.Reattach(ctx, j.Job())
		return err
	}))
}

var errNoRemoteStore = errors.New("this run has no NATS store to look it up in: resume with the --store nats://... the session used")

// remoteResumeNote is the lead's note of its session's remote jobs;
// reattach takes up one whose end was not recorded.
func remoteResumeNote(jobs []record.RemoteJob, reattach func(record.RemoteJob) error) string {
	var b strings.Builder
	b.WriteString("<system-reminder>\nThis session was resumed. The remote agents it started before (from the session record):\n")
	for _, j := range jobs {
		b.WriteString("- " + j.Describe())
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
