package swarm

import (
	"encoding/json"
	"fmt"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
)

// Verdict builds the lead's answer to a permission request that came by
// mail: allowed (with rules, the "allow always" rules to send along) or
// denied with message as the reason the model sees. It is the one
// encoding of the answer, used by the lead and by the dashboard.
func Verdict(f mailbox.PermissionRequest, allow bool, rules []string, message string) (mailbox.PermissionResponse, error) {
	resp := mailbox.PermissionResponse{RequestID: f.RequestID, ToolUseID: f.ToolUseID}
	if !allow {
		resp.Subtype, resp.Error = "error", "Permission denied by the team lead"+feedback(message)
		return resp, nil
	}
	input := f.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	digest, err := mailbox.InputDigest(f.ToolName, input)
	if err != nil {
		return mailbox.PermissionResponse{}, fmt.Errorf("the request's input does not decode: %w", err)
	}
	resp.Subtype = "success"
	resp.ApprovedRequest = &mailbox.ApprovedRequest{ToolUseID: f.ToolUseID, ToolName: f.ToolName, InputDigest: digest}
	resp.Response = &mailbox.PermissionVerdict{UpdatedInput: input, PermissionUpdates: []json.RawMessage{}}
	if len(rules) > 0 {
		prs := make([]permission.Rule, 0, len(rules))
		for _, r := range rules {
			pr, err := permission.ParseRule(r)
			if err != nil {
				return mailbox.PermissionResponse{}, fmt.Errorf("allow always: %w", err)
			}
			prs = append(prs, pr)
		}
		u, err := addRulesUpdate(prs, "session")
		if err != nil {
			return mailbox.PermissionResponse{}, err
		}
		resp.Response.PermissionUpdates = append(resp.Response.PermissionUpdates, u)
	}
	return resp, nil
}
