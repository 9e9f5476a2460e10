package teamtool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// ExitPlanMode is the ExitPlanMode tool of a plan-mode teammate: it sends
// the plan to the lead as a plan_approval_request and reports the request
// to Hooks.PlanSubmitted. The lead's plan_approval_response arrives later
// as a message.
type ExitPlanMode struct{ e *env }

//go:embed exitplanmode.md
var exitPlanModeDescription string

const exitPlanModeSchema = `{
  "type": "object",
  "properties": {
    "plan": {"type": "string", "description": "The plan, in Markdown: the steps you will take, the files you will change, and how you will check the result"}
  },
  "required": ["plan"],
  "additionalProperties": false
}`

// MaxPlanLen bounds a plan, in bytes: the lead is shown this much.
const MaxPlanLen = 40000

// Spec implements tool.Tool.
func (*ExitPlanMode) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "ExitPlanMode", Description: exitPlanModeDescription, InputSchema: json.RawMessage(exitPlanModeSchema)}
}

// ReadOnly implements tool.Tool: the request changes the lead's inbox.
func (*ExitPlanMode) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (x *ExitPlanMode) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		Plan string `json:"plan"`
	}
	if res, ok := tool.Decode("ExitPlanMode", call.Input, &in); !ok {
		return res, nil
	}
	switch {
	case strings.TrimSpace(in.Plan) == "":
		return tool.Errorf("ExitPlanMode: invalid input: plan is required (the steps you will take)"), nil
	case len(in.Plan) > MaxPlanLen:
		return tool.Errorf("ExitPlanMode: invalid input: plan is %d bytes, more than %d; shorten it to what the lead must approve", len(in.Plan), MaxPlanLen), nil
	}
	self, err := x.e.self()
	if err != nil {
		return tool.Result{}, err
	}
	switch {
	case self.Team == "":
		return noTeam("ExitPlanMode", self), nil
	case self.Lead:
		return tool.Errorf("ExitPlanMode: the team lead does not ask for plan approval"), nil
	case x.e.cfg.Mail == nil:
		return tool.Result{}, errConfig("Mail")
	}
	now := x.e.now()
	id := fmt.Sprintf("plan_approval-%d@%s@%s", now.UnixMilli(), self.Name, self.Team)
	text, err := mailbox.Encode(mailbox.PlanApprovalRequest{From: self.Name, Timestamp: stamp(now), PlanContent: in.Plan, RequestID: id})
	if err != nil {
		return tool.Result{}, fmt.Errorf("teamtool: encode plan approval request: %w", err)
	}
	// The runtime learns the request id before the lead can answer it.
	if h := x.e.cfg.Hooks.PlanSubmitted; h != nil {
		h(id, mailbox.PlanDigest(in.Plan))
	}
	if _, err := x.e.cfg.Mail.Send(ctx, self.Team, team.LeadName, mailbox.Message{From: self.Name, Text: text, Color: self.Color, Timestamp: now}); err != nil {
		if e := ctxErr(ctx); e != nil {
			return tool.Result{}, e
		}
		return tool.Errorf("ExitPlanMode: could not send the plan to %s: %v", team.LeadName, err), nil
	}
	return tool.Result{Content: fmt.Sprintf("Your plan was sent to %s for approval (request id %s). Wait for the answer: it arrives as a message. Do not start implementing until the plan is approved; if it is rejected, revise it with the feedback and call ExitPlanMode again.", team.LeadName, id)}, nil
}
