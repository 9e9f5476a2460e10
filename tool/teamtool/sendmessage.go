package teamtool

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// SendMessage is the SendMessage tool of a team member: plain messages to
// a teammate, the lead or everyone ("*"), and the structured messages
// shutdown_request (lead), shutdown_response (teammate) and
// plan_approval_response (lead). A `to` that is not on the roster goes to
// Config.SubAgents when set.
type SendMessage struct{ e *env }

var _ tool.Tool = (*SendMessage)(nil)

//go:embed sendmessage.md
var sendMessageDescription string

const sendMessageSchema = `{
  "type": "object",
  "properties": {
    "to": {"type": "string", "description": "A teammate's name, \"team-lead\" (or \"main\") for the lead, \"*\" for every teammate, or a background agent's id or name; single line"},
    "summary": {"type": "string", "maxLength": 200, "description": "Optional 5-10 word preview of a plain-text message; the first line is used when omitted"},
    "message": {
      "anyOf": [
        {"type": "string", "description": "A plain-text message"},
        {"type": "object", "required": ["type"], "additionalProperties": false, "properties": {"type": {"const": "shutdown_request"}, "reason": {"type": "string"}}},
        {"type": "object", "required": ["type", "request_id", "approve"], "additionalProperties": false, "properties": {"type": {"const": "shutdown_response"}, "request_id": {"type": "string"}, "approve": {"type": "boolean"}, "reason": {"type": "string"}}},
        {"type": "object", "required": ["type", "request_id", "approve"], "additionalProperties": false, "properties": {"type": {"const": "plan_approval_response"}, "request_id": {"type": "string"}, "approve": {"type": "boolean"}, "feedback": {"type": "string"}}}
      ]
    }
  },
  "required": ["to", "message"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*SendMessage) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "SendMessage", Description: sendMessageDescription, InputSchema: json.RawMessage(sendMessageSchema)}
}

// ReadOnly implements tool.Tool: a message changes another agent's work.
func (*SendMessage) ReadOnly(json.RawMessage) bool { return false }

// sendInput is the decoded input of a SendMessage call.
type sendInput struct {
	To             string          `json:"to"`
	Message        json.RawMessage `json:"message"`
	Summary        string          `json:"summary"`
	NotifyWhenIdle *bool           `json:"notify_when_idle"`
}

// Structured message inputs, one per type.
type (
	shutdownRequestIn struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	shutdownResponseIn struct {
		Type      string `json:"type"`
		RequestID string `json:"request_id"`
		Approve   *bool  `json:"approve"`
		Reason    string `json:"reason"`
	}
	planResponseIn struct {
		Type      string `json:"type"`
		RequestID string `json:"request_id"`
		Approve   *bool  `json:"approve"`
		Feedback  string `json:"feedback"`
	}
)

// routing is what a send looked like, as the model reads it back.
type routing struct {
	Sender      string `json:"sender"`
	Target      string `json:"target"`
	TargetColor string `json:"targetColor,omitempty"`
	Summary     string `json:"summary,omitempty"`
	Content     string `json:"content,omitempty"`
}

// sendResult is the result of a successful send.
type sendResult struct {
	Success    bool     `json:"success"`
	Message    string   `json:"message"`
	MsgID      string   `json:"msg_id,omitempty"`
	RequestID  string   `json:"request_id,omitempty"`
	Recipients []string `json:"recipients,omitempty"`
	Routing    *routing `json:"routing,omitempty"`
}

// message is a SendMessage input's message after parseMessage: exactly
// one of Text (plain) and Type (structured, with Raw its JSON) is set.
type message struct {
	Text string
	Type string
	Raw  json.RawMessage
}

// structuredTypes are the structured message types SendMessage accepts.
var structuredTypes = []string{mailbox.KindShutdownRequest, mailbox.KindShutdownResponse, mailbox.KindPlanApprovalResponse}

// parseInput decodes and checks a SendMessage input without I/O. The
// error is the text the model reads.
func parseInput(input json.RawMessage) (sendInput, message, error) {
	var in sendInput
	if res, ok := tool.Decode("SendMessage", input, &in); !ok {
		return in, message{}, errors.New(res.Content)
	}
	in.To = strings.TrimSpace(in.To)
	raw := bytes.TrimSpace(in.Message)
	raw = repairSummary(&in, raw)
	switch {
	case in.To == "":
		return in, message{}, errors.New(`SendMessage: invalid input: to is required (a teammate's name, "team-lead", or "*")`)
	case strings.ContainsAny(in.To, "\r\n"):
		return in, message{}, errors.New("SendMessage: invalid input: to must be a single line (one recipient name)")
	case in.NotifyWhenIdle != nil && *in.NotifyWhenIdle:
		return in, message{}, errors.New("SendMessage: notify_when_idle is for messages to other sessions, which are not supported; omit it")
	case len([]rune(in.Summary)) > mailbox.MaxSummaryLen:
		return in, message{}, fmt.Errorf("SendMessage: invalid input: summary is %d characters, more than %d; keep it to 5-10 words", len([]rune(in.Summary)), mailbox.MaxSummaryLen)
	case len(raw) == 0 || string(raw) == "null":
		return in, message{}, errors.New("SendMessage: invalid input: message is required")
	}
	switch raw[0] {
	case '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return in, message{}, fmt.Errorf("SendMessage: invalid input: message is not a valid JSON string: %v", err)
		}
		if strings.TrimSpace(text) == "" {
			return in, message{}, errors.New("SendMessage: invalid input: message is empty")
		}
		if len(text) > mailbox.MaxTextLen {
			return in, message{}, fmt.Errorf("SendMessage: invalid input: message is %d bytes, more than the %d allowed", len(text), mailbox.MaxTextLen)
		}
		if k := frameType(text); k != "" {
			return in, message{}, fmt.Errorf("SendMessage: a plain-text message may not be a %s protocol frame; send structured messages as a message object (type shutdown_request, shutdown_response or plan_approval_response), other frames are written by the runtime", k)
		}
		return in, message{Text: text}, nil
	case '{':
		var head struct {
			Type any `json:"type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return in, message{}, fmt.Errorf("SendMessage: invalid input: message object is not valid JSON: %v", err)
		}
		typ, _ := head.Type.(string)
		switch typ {
		case mailbox.KindShutdownRequest, mailbox.KindShutdownResponse, mailbox.KindPlanApprovalResponse:
			return in, message{Type: typ, Raw: raw}, nil
		case "":
			return in, message{}, fmt.Errorf("SendMessage: invalid input: a message object needs a string type, one of %s; send plain text as a string", strings.Join(structuredTypes, ", "))
		default:
			return in, message{}, fmt.Errorf("SendMessage: invalid input: message type %q is not one of %s", typ, strings.Join(structuredTypes, ", "))
		}
	default:
		return in, message{}, fmt.Errorf("SendMessage: invalid input: message must be a string or an object with a type, got JSON %s", abbrev(raw))
	}
}

// summaryLeak is what a model writes when it closes the summary parameter
// of a tool call as if it were a tag and opens the message parameter in
// the same value.
const summaryLeak = `</summary><parameter name="message">`

// repairSummary splits a summary that swallowed the message (docs/protocol.md section 9:
// the leak is repaired, not refused): the summary keeps what precedes the
// leak, and the rest becomes the message when the call has none. It
// returns the message to use.
func repairSummary(in *sendInput, raw []byte) []byte {
	i := strings.Index(in.Summary, summaryLeak)
	if i < 0 {
		return raw
	}
	rest := strings.TrimSuffix(strings.TrimSpace(in.Summary[i+len(summaryLeak):]), "</parameter>")
	in.Summary = strings.TrimSpace(in.Summary[:i])
	if len(raw) == 0 || string(raw) == "null" {
		if b, err := json.Marshal(rest); err == nil {
			return b
		}
	}
	return raw
}

// strict decodes a structured message, refusing unknown fields.
func strict(typ string, raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("SendMessage: invalid input: %s field %q must be %s, got JSON %s", typ, te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("SendMessage: invalid input: %s message: %s", typ, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// abbrev shortens raw JSON for an error message, on a rune boundary (cut).
func abbrev(b []byte) string {
	if s := cut(string(b), 60); len(s) < len(b) {
		return s + "..."
	}
	return string(b)
}

// Run implements tool.Tool. It returns a Go error only when ctx ends or
// the Config lacks a store.
func (m *SendMessage) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	in, msg, err := parseInput(call.Input)
	if err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	self, err := m.e.self()
	if err != nil {
		return tool.Result{}, err
	}
	if self.Team == "" {
		if m.e.cfg.SubAgents != nil && msg.Type == "" {
			return m.forward(ctx, call, in, msg)
		}
		return noTeam("SendMessage", self), nil
	}
	if m.e.cfg.Teams == nil || m.e.cfg.Mail == nil {
		return tool.Result{}, errConfig("Teams or Config.Mail")
	}
	cfg, err := m.e.cfg.Teams.Get(ctx, self.Team)
	if err != nil {
		if e := ctxErr(ctx); e != nil {
			return tool.Result{}, e
		}
		if errors.Is(err, team.ErrNotFound) {
			return tool.Errorf("SendMessage: your team %q no longer exists", self.Team), nil
		}
		return tool.Errorf("SendMessage: could not read team %q: %v", self.Team, err), nil
	}
	to, err := resolve(in.To, self, cfg)
	if err != nil {
		return tool.Errorf("SendMessage: %v", err), nil
	}
	if !to.Member {
		if m.e.cfg.SubAgents != nil && msg.Type == "" {
			return m.forward(ctx, call, in, msg)
		}
		return tool.Errorf("SendMessage: %q is not a member of team %q; members: %s", in.To, self.Team, strings.Join(rosterNames(cfg, ""), ", ")), nil
	}
	switch msg.Type {
	case "":
		return m.sendText(ctx, self, cfg, to, in.Summary, msg.Text)
	case mailbox.KindShutdownRequest:
		return m.shutdownRequest(ctx, self, to, msg.Raw)
	case mailbox.KindShutdownResponse:
		return m.shutdownResponse(ctx, self, to, msg.Raw)
	default:
		return m.planResponse(ctx, self, to, msg.Raw)
	}
}

// forward hands a plain message for a non-member to the sub-agent tool.
func (m *SendMessage) forward(ctx context.Context, call tool.Call, in sendInput, msg message) (tool.Result, error) {
	fwd := struct {
		To      string `json:"to"`
		Message string `json:"message"`
		Summary string `json:"summary,omitempty"`
	}{in.To, msg.Text, in.Summary}
	b, err := json.Marshal(fwd)
	if err != nil {
		return tool.Result{}, fmt.Errorf("teamtool: encode forwarded message: %w", err)
	}
	return m.e.cfg.SubAgents.Run(ctx, tool.Call{ID: call.ID, Name: call.Name, Input: b})
}

// deliver sends text from self to to and turns a failure into a Result.
func (m *SendMessage) deliver(ctx context.Context, self Self, to, text, summary string) ([]mailbox.Delivery, *tool.Result, error) {
	ds, err := m.e.cfg.Mail.Send(ctx, self.Team, to, mailbox.Message{From: self.Name, Text: text, Summary: summary, Color: self.Color, Timestamp: m.e.now()})
	if err == nil {
		return ds, nil, nil
	}
	if e := ctxErr(ctx); e != nil {
		return nil, nil, e
	}
	if res, ok := unknownRecipient("SendMessage", err); ok {
		return nil, &res, nil
	}
	res := tool.Errorf("SendMessage: could not deliver to %s: %v", to, err)
	if len(ds) > 0 {
		res = tool.Errorf("SendMessage: delivered to %s only, then failed: %v", strings.Join(names(ds), ", "), err)
	}
	return nil, &res, nil
}

func names(ds []mailbox.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.To
	}
	return out
}

// sendText delivers a plain-text message to a member or to everyone.
func (m *SendMessage) sendText(ctx context.Context, self Self, cfg team.Config, to target, summary, text string) (tool.Result, error) {
	summary = strings.TrimSpace(summary)
	if summary == "" {
		summary = summarize(text)
	}
	if to.Broadcast && len(rosterNames(cfg, self.Name)) == 0 {
		return tool.Errorf("SendMessage: team %q has no other members to broadcast to", self.Team), nil
	}
	ds, res, err := m.deliver(ctx, self, to.Name, text, summary)
	if res != nil || err != nil {
		return derefResult(res), err
	}
	out := sendResult{Success: true, Routing: &routing{Sender: self.Name, Target: "@" + to.Name, TargetColor: to.Color, Summary: summary, Content: text}}
	if to.Broadcast {
		out.Recipients = names(ds)
		out.Routing.Target = "@" + mailbox.Broadcast
		out.Message = fmt.Sprintf("Message broadcast to %d teammate(s): %s", len(ds), strings.Join(out.Recipients, ", "))
	} else {
		out.Message = fmt.Sprintf("Message sent to %s's inbox", to.Name)
		if len(ds) > 0 {
			out.MsgID = ds[0].ID
		}
	}
	return jsonResult(out)
}

func derefResult(r *tool.Result) tool.Result {
	if r == nil {
		return tool.Result{}
	}
	return *r
}

// sendFrame encodes f and delivers it to one member.
func (m *SendMessage) sendFrame(ctx context.Context, self Self, to string, f mailbox.Frame) (string, *tool.Result, error) {
	text, err := mailbox.Encode(f)
	if err != nil {
		return "", nil, fmt.Errorf("teamtool: encode %s: %w", f.Kind(), err)
	}
	ds, res, err := m.deliver(ctx, self, to, text, "")
	if res != nil || err != nil {
		return "", res, err
	}
	if len(ds) == 0 {
		return "", nil, nil
	}
	return ds[0].ID, nil, nil
}

// oneLine checks a request_id.
func oneLine(typ, id, prefix string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return fmt.Errorf("SendMessage: invalid input: %s needs request_id, the requestId of the request you answer", typ)
	case strings.ContainsAny(id, "\r\n"):
		return fmt.Errorf("SendMessage: invalid input: %s request_id must be a single line", typ)
	case !strings.HasPrefix(id, prefix):
		return fmt.Errorf("SendMessage: invalid input: %s request_id %q is not a %s... id; copy the requestId of the request you answer", typ, id, prefix)
	}
	return nil
}

// shutdownRequest asks a teammate to shut down (lead only).
func (m *SendMessage) shutdownRequest(ctx context.Context, self Self, to target, raw json.RawMessage) (tool.Result, error) {
	var in shutdownRequestIn
	if err := strict(mailbox.KindShutdownRequest, raw, &in); err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	switch {
	case !self.Lead:
		return tool.Errorf("SendMessage: only the team lead may send a shutdown_request; answer the lead's request with a shutdown_response instead"), nil
	case to.Broadcast:
		return tool.Errorf(`SendMessage: a shutdown_request goes to one teammate, not "*"; send one per teammate`), nil
	case to.Name == team.LeadName:
		return tool.Errorf("SendMessage: a shutdown_request goes to a teammate, not to the lead"), nil
	}
	now := m.e.now()
	id := fmt.Sprintf("shutdown-%d@%s", now.UnixMilli(), to.Name)
	msgID, res, err := m.sendFrame(ctx, self, to.Name, mailbox.ShutdownRequest{RequestID: id, From: self.Name, Reason: strings.TrimSpace(in.Reason), Timestamp: stamp(now)})
	if res != nil || err != nil {
		return derefResult(res), err
	}
	return jsonResult(sendResult{Success: true, MsgID: msgID, RequestID: id,
		Message: fmt.Sprintf("Shutdown request sent to %s (request id %s). It will approve and end, or reject with a reason; its answer arrives as a message.", to.Name, id),
		Routing: &routing{Sender: self.Name, Target: "@" + to.Name, TargetColor: to.Color}})
}

// shutdownResponse answers the lead's shutdown request (teammates only).
func (m *SendMessage) shutdownResponse(ctx context.Context, self Self, to target, raw json.RawMessage) (tool.Result, error) {
	var in shutdownResponseIn
	if err := strict(mailbox.KindShutdownResponse, raw, &in); err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	in.RequestID, in.Reason = strings.TrimSpace(in.RequestID), strings.TrimSpace(in.Reason)
	switch {
	case self.Lead:
		return tool.Errorf("SendMessage: shutdown_response is a teammate's answer to the lead's shutdown_request; as the lead, use shutdown_request to ask a teammate to stop"), nil
	case to.Name != team.LeadName:
		return tool.Errorf(`SendMessage: a shutdown_response goes to the lead: use to: "team-lead"`), nil
	case in.Approve == nil:
		return tool.Errorf("SendMessage: invalid input: shutdown_response needs approve (true to shut down, false to keep working)"), nil
	case !*in.Approve && in.Reason == "":
		return tool.Errorf("SendMessage: invalid input: rejecting a shutdown needs a reason the lead can read"), nil
	}
	if err := oneLine(mailbox.KindShutdownResponse, in.RequestID, "shutdown-"); err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	now := m.e.now()
	var f mailbox.Frame = mailbox.ShutdownRejected{RequestID: in.RequestID, From: self.Name, Reason: in.Reason, Timestamp: stamp(now)}
	if *in.Approve {
		f = mailbox.ShutdownApproved{RequestID: in.RequestID, From: self.Name, Timestamp: stamp(now), PaneID: self.PaneID, BackendType: self.Backend}
	}
	msgID, res, err := m.sendFrame(ctx, self, team.LeadName, f)
	if res != nil || err != nil {
		return derefResult(res), err
	}
	out := sendResult{Success: true, MsgID: msgID, RequestID: in.RequestID, Routing: &routing{Sender: self.Name, Target: "@" + team.LeadName, TargetColor: to.Color}}
	if *in.Approve {
		if h := m.e.cfg.Hooks.ShutdownApproved; h != nil {
			h(in.RequestID)
		}
		out.Message = "Shutdown approved and the lead told. You will be ended after this tool round: do not start new work."
	} else {
		out.Message = "Shutdown rejected; the lead has your reason. Carry on with your work."
	}
	return jsonResult(out)
}

// planResponse answers a teammate's plan approval request (lead only).
func (m *SendMessage) planResponse(ctx context.Context, self Self, to target, raw json.RawMessage) (tool.Result, error) {
	var in planResponseIn
	if err := strict(mailbox.KindPlanApprovalResponse, raw, &in); err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	in.RequestID, in.Feedback = strings.TrimSpace(in.RequestID), strings.TrimSpace(in.Feedback)
	switch {
	case !self.Lead:
		return tool.Errorf("SendMessage: only the team lead may answer a plan approval request"), nil
	case to.Broadcast:
		return tool.Errorf(`SendMessage: a plan_approval_response goes to the teammate that asked, not "*"`), nil
	case to.Name == team.LeadName:
		return tool.Errorf("SendMessage: a plan_approval_response goes to the teammate that asked, not to the lead"), nil
	case in.Approve == nil:
		return tool.Errorf("SendMessage: invalid input: plan_approval_response needs approve (true to let the teammate proceed, false to send it back)"), nil
	case !*in.Approve && in.Feedback == "":
		return tool.Errorf("SendMessage: invalid input: rejecting a plan needs feedback telling the teammate what to change"), nil
	}
	if err := oneLine(mailbox.KindPlanApprovalResponse, in.RequestID, "plan_approval-"); err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	// plan_approval-<ms>@<name>@<team>: the request names who asked.
	if parts := strings.Split(in.RequestID, "@"); len(parts) == 3 && parts[1] != to.Name {
		return tool.Errorf("SendMessage: plan approval request %s came from %s, not %s; answer it to %s", in.RequestID, parts[1], to.Name, parts[1]), nil
	}
	f := mailbox.PlanApprovalResponse{RequestID: in.RequestID, Approved: *in.Approve, Feedback: in.Feedback, Timestamp: stamp(m.e.now())}
	if *in.Approve {
		f.PermissionMode = "default" // never bypass: an approved plan does not widen permissions
		if h := m.e.cfg.Hooks.PlanDigest; h != nil {
			if d, ok := h(in.RequestID); ok {
				f.PlanDigest = d
			}
		}
	}
	msgID, res, err := m.sendFrame(ctx, self, to.Name, f)
	if res != nil || err != nil {
		return derefResult(res), err
	}
	out := sendResult{Success: true, MsgID: msgID, RequestID: in.RequestID, Routing: &routing{Sender: self.Name, Target: "@" + to.Name, TargetColor: to.Color}}
	if *in.Approve {
		out.Message = fmt.Sprintf("Plan approved; %s may now implement it (permission mode default).", to.Name)
	} else {
		out.Message = fmt.Sprintf("Plan rejected; %s has your feedback and will revise it.", to.Name)
	}
	return jsonResult(out)
}
