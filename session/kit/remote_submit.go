package kit

import (
	"context"

	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool/agenttool"
)

// RemoteSubmitter submits the Agent tool's remote calls (isolation
// "remote", or labels) as jobs through Client, each asking for Labels of
// its worker and the call's own labels.
type RemoteSubmitter struct {
	Client *remote.Client
	Labels []string
}

var _ agenttool.Remote = RemoteSubmitter{}

// SubmitRemote implements agenttool.Remote.
func (r RemoteSubmitter) SubmitRemote(ctx context.Context, req agenttool.RemoteRequest) (task.ID, error) {
	st, err := r.Client.Submit(ctx, remote.Request{Description: req.Description, Prompt: req.Prompt, Model: req.Model,
		ToolUseID: req.ToolUseID, Labels: remote.JoinLabels(r.Labels, req.Labels)})
	return st.ID, err
}
