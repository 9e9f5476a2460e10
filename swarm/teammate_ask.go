package swarm

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/ask"
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
		mode = cmp.Or(tm.cfg.SetMode(mode), mode)
	}
	// Its member entry says the mode it now works in, not plan: the
	// lead, the dashboard and a Claude Code lead read it there.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err := team.UpdateMember(ctx, tm.cfg.Teams, tm.cfg.Team, tm.cfg.Name, func(mm *team.Member) error {
		mm.Mode = mode
		return nil
	})
	cancel()
	if err != nil {
		tm.cfg.Log.Warn("record the mode after the plan's approval", "agent", tm.cfg.Name, "mode", mode, "err", err)
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
	settled := tm.settled[f.RequestID]
	delete(tm.settled, f.RequestID)
	tm.mu.Unlock()
	if settled {
		return // a mirrored request answered in process
	}
	if ch == nil {
		tm.event(EventWarning, "ignored a permission response for unknown request "+f.RequestID)
		return
	}
	ch <- f // buffered
}

// unverifiedVerdict is the answer a call gets when a verdict for it fails
// lead verification.
const unverifiedVerdict = "the team lead's answer to this request could not be verified (its signature is missing or wrong), so it was not used and the call was not run; if the team lead restarted, asking again will not help, and the person must start a new teammate"

// refuseUnverified weighs a permission verdict that failed lead
// verification: the call it names, if still waiting, is refused rather
// than left waiting for an answer that may never verify (a lead that
// restarted signs with another key); Claude Code's teammates do the same.
// dispatch weighs such verdicts after the verified ones it read with
// them, so a verified answer that came in the same read wins.
func (tm *Teammate) refuseUnverified(f mailbox.PermissionResponse) {
	tm.event(EventWarning, "request "+f.RequestID+": its verdict failed lead verification; the call waiting for it, if any, is refused")
	tm.answer(mailbox.PermissionResponse{RequestID: f.RequestID, Subtype: "error", Error: unverifiedVerdict})
}

// refuseUnverifiedPlan weighs a plan verdict that failed lead
// verification: for the plan waiting for approval it is a rejection the
// model is told about (the teammate stays in plan mode), as Claude Code's
// teammates do, rather than a wait for an answer that may never verify;
// for any other plan it is dropped.
func (tm *Teammate) refuseUnverifiedPlan(f mailbox.PlanApprovalResponse) {
	tm.mu.Lock()
	waiting := tm.planned && tm.plan != "" && f.RequestID == tm.plan
	tm.mu.Unlock()
	if !waiting {
		tm.event(EventWarning, "ignored a plan_approval_response frame that failed lead verification, for no waiting plan ("+f.RequestID+")")
		return
	}
	tm.event(EventPlan, "plan verdict failed lead verification: taken as a rejection")
	tm.queue("[Plan Rejected] The team lead's answer to your plan could not be verified (its signature is missing or wrong), so it was not used. You are still in plan mode (read-only). If the team lead restarted, submitting the plan again will not help: say so and stop.")
}

// Ask relays a permission question to the lead through the mailbox and
// waits for the answer (approve.Asker). No answer within AskTimeout
// denies the call with a reason the model sees.
func (tm *Teammate) Ask(ctx context.Context, req approve.AskRequest) (approve.Answer, error) {
	q, err := tm.mailAsk(ctx, req, "perm-")
	if err != nil {
		return approve.Answer{}, err
	}
	defer tm.forget(q.frame.RequestID, false)
	timer := time.NewTimer(tm.cfg.AskTimeout)
	defer timer.Stop()
	select {
	case f := <-q.ch:
		return tm.verdict(f, req, q.digest), nil
	case <-timer.C:
		return approve.Answer{Allow: false, Message: fmt.Sprintf("the team lead did not answer the permission request within %s; the call was not run", tm.cfg.AskTimeout)}, nil
	case <-ctx.Done():
		return approve.Answer{}, context.Cause(ctx)
	}
}

// AskMirrored asks in process (inProcess: the lead's approval queue, for
// a teammate in the lead's process) and by mail at once: the request
// frame in the lead's inbox lets the other front ends of the team (the
// dashboard) see the question and answer it with the lead's encoding
// (Verdict). The first answer wins and the other question is withdrawn
// (inProcess's ctx is canceled); an answer given in process is written
// back as the mail verdict, so those front ends see it answered. The lead
// does not answer the mirrored frame itself (it comes from an in-process
// teammate, and its request id starts with "perm-mirror-").
func (tm *Teammate) AskMirrored(ctx context.Context, req approve.AskRequest, inProcess func(context.Context, approve.AskRequest) (approve.Answer, error)) (approve.Answer, error) {
	q, err := tm.mailAsk(ctx, req, mirrorPrefix)
	if err != nil {
		// No mirror (the store refused it): the lead's queue alone.
		tm.cfg.Log.Warn("mirror a permission request by mail", "agent", tm.cfg.Name, "err", err)
		return inProcess(ctx, req)
	}
	type result struct {
		ans approve.Answer
		err error
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := make(chan result, 1)
	go func() {
		ans, err := inProcess(ictx, req)
		res <- result{ans, err}
	}()
	select {
	case f := <-q.ch:
		cancel() // withdrawn: the lead's queue ends it without this call waiting
		tm.forget(q.frame.RequestID, false)
		return tm.verdict(f, req, q.digest), nil
	case r := <-res:
		if r.err != nil {
			tm.forget(q.frame.RequestID, false)
			return r.ans, r.err
		}
		// Answered here: the verdict by mail marks the mirror answered;
		// the pump drops it when it comes back.
		tm.forget(q.frame.RequestID, true)
		resp, err := Verdict(q.frame, r.ans.Allow, nil, r.ans.Message)
		if err == nil && r.ans.Allow && len(r.ans.UpdatedInput) > 0 {
			resp, err = withInput(q.frame, r.ans.UpdatedInput) // a question's answers
		}
		if err == nil {
			if text, err := mailbox.Encode(resp); err == nil {
				if _, err := tm.cfg.Mail.Send(ctx, tm.cfg.Team, tm.cfg.Name, mailbox.Message{From: team.LeadName, Text: text}); err != nil && ctx.Err() == nil {
					tm.cfg.Log.Warn("mark a mirrored permission request answered", "agent", tm.cfg.Name, "err", err)
				}
			}
		}
		return r.ans, nil
	case <-ctx.Done():
		tm.forget(q.frame.RequestID, false)
		return approve.Answer{}, context.Cause(ctx)
	}
}

// mirrorPrefix starts the request id of a mirrored question
// (AskMirrored), which its lead leaves to the in-process queue.
const mirrorPrefix = "perm-mirror-"

// question is a permission request sent by mail, waiting for its verdict.
type question struct {
	frame  mailbox.PermissionRequest
	digest string
	ch     chan mailbox.PermissionResponse
}

// mailAsk sends req to the lead's inbox as a permission request frame,
// registered for its verdict (answer).
func (tm *Teammate) mailAsk(ctx context.Context, req approve.AskRequest, prefix string) (question, error) {
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	digest, err := mailbox.InputDigest(req.Tool, input)
	if err != nil {
		return question{}, err
	}
	id := fmt.Sprintf("%s%d-%s", prefix, tm.cfg.Now().UnixMilli(), strings.ToLower(rand.Text()[:7]))
	q := question{digest: digest, ch: make(chan mailbox.PermissionResponse, 1),
		frame: mailbox.PermissionRequest{RequestID: id, AgentID: tm.cfg.Name, ToolName: req.Tool,
			ToolUseID: req.ToolUseID, Description: req.Reason, Input: input, PermissionSuggestions: []json.RawMessage{}}}
	text, err := mailbox.Encode(q.frame)
	if err != nil {
		return question{}, err
	}
	tm.mu.Lock()
	tm.asks[id] = q.ch
	tm.mu.Unlock()
	if _, err := tm.cfg.Mail.Send(ctx, tm.cfg.Team, team.LeadName, mailbox.Message{From: tm.cfg.Name, Color: tm.cfg.Color, Text: text}); err != nil {
		tm.forget(id, false)
		return question{}, fmt.Errorf("ask the team lead: %w", err)
	}
	if req.Tool == ask.ToolName {
		tm.event(EventPermission, "asked the lead's person: "+firstLine(req.Reason, 100))
	} else {
		tm.event(EventPermission, fmt.Sprintf("asked the lead to allow %s (%s)", req.Tool, summarizeInput(input)))
	}
	return q, nil
}

// forget stops waiting for request id's verdict; with settled, a verdict
// that still comes is dropped without a warning (it was answered
// another way).
func (tm *Teammate) forget(id string, settled bool) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	delete(tm.asks, id)
	if settled {
		tm.settled[id] = true
	}
}

// verdict turns the lead's mail verdict into the call's answer.
func (tm *Teammate) verdict(f mailbox.PermissionResponse, req approve.AskRequest, digest string) approve.Answer {
	if f.Subtype != "success" {
		msg := f.Error
		if msg == "" {
			msg = "the team lead denied this call"
		}
		return approve.Answer{Allow: false, Message: msg}
	}
	if ar := f.ApprovedRequest; ar != nil && (ar.ToolName != req.Tool || (ar.InputDigest != "" && ar.InputDigest != digest)) {
		return approve.Answer{Allow: false, Message: "the team lead's approval names a different tool call; refused"}
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
	return ans
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
