package swarm

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/team"
)

// DefaultAskTimeout is how long a teammate waits for the lead's answer to
// a permission request before the call is denied.
const DefaultAskTimeout = 5 * time.Minute

// planVerdict applies the lead's answer to the pending plan.
func (tm *Teammate) planVerdict(m mailbox.Message, f mailbox.PlanApprovalResponse) {
	tm.mu.Lock()
	pending := tm.plan
	tm.mu.Unlock()
	if m.From != team.LeadName || !tm.planned || (pending != "" && f.RequestID != pending) {
		tm.event(EventWarning, fmt.Sprintf("ignored a plan approval response from %s (not the lead, not in plan mode, or for another plan)", m.From))
		return
	}
	if !f.Approved {
		tm.event(EventPlan, "plan rejected: "+f.Feedback)
		tm.queue("[Plan Rejected] The team lead rejected your plan. Feedback: " + f.Feedback + "\nRevise the plan and submit it again with ExitPlanMode. You are still in plan mode (read-only).")
		return
	}
	mode := f.PermissionMode
	if mode == "" || mode == "bypassPermissions" || mode == "plan" {
		mode = "default" // a plan approval never grants bypass
	}
	tm.mu.Lock()
	tm.planned = false
	tm.plan = ""
	tm.mu.Unlock()
	if tm.cfg.SetMode != nil {
		tm.cfg.SetMode(mode)
	}
	tm.event(EventPlan, "plan approved; permission mode "+mode)
	msg := "[Plan Approved] The team lead approved your plan. You are now in " + mode + " permission mode: carry it out."
	if f.Feedback != "" {
		msg += "\nFeedback: " + f.Feedback
	}
	tm.queue(msg)
}

// Planning reports whether the teammate is still in plan mode.
func (tm *Teammate) Planning() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.planned
}

// answer delivers a permission verdict to the call waiting for it.
func (tm *Teammate) answer(f mailbox.PermissionResponse) {
	tm.mu.Lock()
	ch := tm.asks[f.RequestID]
	delete(tm.asks, f.RequestID)
	tm.mu.Unlock()
	if ch == nil {
		tm.event(EventWarning, "ignored a permission response for unknown request "+f.RequestID)
		return
	}
	ch <- f // buffered
}

// Ask relays a permission question to the lead through the mailbox and
// waits for the answer (approve.Asker). No answer within AskTimeout
// denies the call with a reason the model sees.
func (tm *Teammate) Ask(ctx context.Context, req approve.AskRequest) (approve.Answer, error) {
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	digest, err := mailbox.InputDigest(req.Tool, input)
	if err != nil {
		return approve.Answer{}, err
	}
	id := fmt.Sprintf("perm-%d-%s", tm.cfg.Now().UnixMilli(), strings.ToLower(rand.Text()[:7]))
	ch := make(chan mailbox.PermissionResponse, 1)
	tm.mu.Lock()
	tm.asks[id] = ch
	tm.mu.Unlock()
	defer func() {
		tm.mu.Lock()
		delete(tm.asks, id)
		tm.mu.Unlock()
	}()
	text, err := mailbox.Encode(mailbox.PermissionRequest{RequestID: id, AgentID: tm.cfg.Name, ToolName: req.Tool,
		ToolUseID: req.ToolUseID, Description: req.Reason, Input: input, PermissionSuggestions: []json.RawMessage{}})
	if err != nil {
		return approve.Answer{}, err
	}
	if _, err := tm.cfg.Mail.Send(ctx, tm.cfg.Team, team.LeadName, mailbox.Message{From: tm.cfg.Name, Color: tm.cfg.Color, Text: text}); err != nil {
		return approve.Answer{}, fmt.Errorf("ask the team lead: %w", err)
	}
	tm.event(EventPermission, fmt.Sprintf("asked the lead to allow %s (%s)", req.Tool, summarizeInput(input)))
	timer := time.NewTimer(tm.cfg.AskTimeout)
	defer timer.Stop()
	select {
	case f := <-ch:
		if f.Subtype != "success" {
			msg := f.Error
			if msg == "" {
				msg = "the team lead denied this call"
			}
			return approve.Answer{Allow: false, Message: msg}, nil
		}
		if ar := f.ApprovedRequest; ar != nil && (ar.ToolName != req.Tool || (ar.InputDigest != "" && ar.InputDigest != digest)) {
			return approve.Answer{Allow: false, Message: "the team lead's approval names a different tool call; refused"}, nil
		}
		ans := approve.Answer{Allow: true}
		if f.Response != nil {
			if len(f.Response.UpdatedInput) > 0 && string(f.Response.UpdatedInput) != "null" {
				ans.UpdatedInput = f.Response.UpdatedInput
			}
			if rules := allowRules(f.Response.PermissionUpdates); len(rules) > 0 && tm.cfg.AddAllowRules != nil {
				tm.cfg.AddAllowRules(rules)
			}
		}
		return ans, nil
	case <-timer.C:
		return approve.Answer{Allow: false, Message: fmt.Sprintf("the team lead did not answer the permission request within %s; the call was not run", tm.cfg.AskTimeout)}, nil
	case <-ctx.Done():
		return approve.Answer{}, context.Cause(ctx)
	}
}

// summarizeInput is a one-line view of a tool input for the timeline.
func summarizeInput(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) == nil {
		for _, k := range []string{"command", "file_path", "path", "pattern", "url"} {
			if v, ok := m[k].(string); ok {
				return firstLine(v, 80)
			}
		}
	}
	return firstLine(string(input), 80)
}
