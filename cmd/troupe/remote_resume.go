package main

import (
	"context"

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
	lr.bg.sess.Deliver(record.ResumeNote(jobs, func(j record.RemoteJob) error {
		if runner.Client == nil {
			return record.ErrNoRemoteStore
		}
		_, err := runner.Client.Reattach(ctx, j.Job())
		return err
	}))
}
