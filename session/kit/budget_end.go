package kit

import (
	"context"
	"time"

	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
)

// A session's limit reached ends the team the way a lead ends it: every
// teammate is asked to shut down (swarm.Lead.BudgetSpent) and approves
// without a model call; a headless run waits for them to leave
// (AwaitBudgetShutdown) before it ends with exit status 6.

// StopRemoteJobs stops the remote jobs of reg that are still pending or
// running: sub-agents on other machines, whose calls no meter here can
// refuse. What they spent still comes back with their last result.
func StopRemoteJobs(ctx context.Context, reg *task.Registry) {
	for _, st := range reg.List() {
		if st.Type == task.RemoteAgent && st.Status.Active() {
			_, _ = reg.Stop(ctx, st.ID)
		}
	}
}

// AwaitBudgetShutdown waits until the teammates asked to shut down at a
// limit have left (swarm.Lead.Settled), at most until the lead would have
// killed one that does not answer (answerTimeout, the default when zero)
// and the kill had been done.
func (lt *LeadTeam) AwaitBudgetShutdown(ctx context.Context, answerTimeout time.Duration) error {
	if answerTimeout <= 0 {
		answerTimeout = swarm.DefaultShutdownAnswerTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, answerTimeout+swarm.DefaultShutdownTimeout+5*time.Second)
	defer cancel()
	return lt.Lead.Settled(ctx)
}
