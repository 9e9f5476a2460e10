package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// maxControlBody bounds a control request's JSON body.
const maxControlBody = mailbox.MaxTextLen + 4096

// decodeControl reads a control request's JSON body into v. Only JSON is
// accepted: a cross-site HTML form cannot send it without a preflight.
func decodeControl(w http.ResponseWriter, r *http.Request, v any) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "dashboard: control requests must be application/json", http.StatusUnsupportedMediaType)
		return false
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxControlBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		http.Error(w, "dashboard: bad request body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// sendAsLead stores a message from team-lead to to in the team's mailbox.
func (s *Server) sendAsLead(w http.ResponseWriter, r *http.Request, teamName, to, text string) ([]mailbox.Delivery, bool) {
	ds, err := s.cfg.Mail.Send(r.Context(), teamName, to, mailbox.Message{From: team.LeadName, Text: text, Timestamp: s.cfg.Now()})
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, mailbox.ErrUnknownRecipient) || errors.Is(err, mailbox.ErrNoTeam) {
			code = http.StatusNotFound
		}
		http.Error(w, "dashboard: send: "+err.Error(), code)
		return nil, false
	}
	return ds, true
}

// refuseSigned answers a control request that would send teammate name
// of team a protocol frame, when name runs in a pane: such a teammate
// takes only frames its lead signed, and the page holds no key. It reports
// whether it refused.
func (s *Server) refuseSigned(w http.ResponseWriter, r *http.Request, teamName, name, what string) bool {
	cfg, err := s.cfg.Teams.Get(r.Context(), teamName)
	if err != nil {
		s.fail(w, err)
		return true
	}
	m, ok := cfg.Member(name)
	if !ok {
		http.Error(w, fmt.Sprintf("dashboard: %s: team %s has no member %q", what, teamName, name), http.StatusNotFound)
		return true
	}
	if m.InPane() {
		http.Error(w, fmt.Sprintf("dashboard: %s: %s runs in a pane (%s) and takes only what its lead signed; the dashboard holds no key, so do this from the lead's own terminal", what, name, m.BackendType), http.StatusConflict)
		return true
	}
	return false
}

// send delivers a plain message from the lead: {"to": NAME|"*", "text": TEXT}.
func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	var req struct{ To, Text string }
	if !decodeControl(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		http.Error(w, "dashboard: send: empty message", http.StatusBadRequest)
		return
	}
	if req.To == "" {
		http.Error(w, "dashboard: send: no recipient", http.StatusBadRequest)
		return
	}
	ds, ok := s.sendAsLead(w, r, r.PathValue("team"), req.To, req.Text)
	if !ok {
		return
	}
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.To
	}
	fmt.Fprintf(w, "sent to %s", strings.Join(names, ", "))
}

// stop asks a teammate to shut down, as the lead's SendMessage does:
// {"name": NAME, "reason": optional}. The teammate's model answers it.
func (s *Server) stop(w http.ResponseWriter, r *http.Request) {
	var req struct{ Name, Reason string }
	if !decodeControl(w, r, &req) {
		return
	}
	if req.Name == "" || req.Name == team.LeadName || req.Name == mailbox.Broadcast {
		http.Error(w, fmt.Sprintf("dashboard: stop: %q is not a teammate that can be stopped", req.Name), http.StatusBadRequest)
		return
	}
	if s.refuseSigned(w, r, r.PathValue("team"), req.Name, "stop") {
		return
	}
	reason := req.Reason
	if reason == "" {
		reason = "stopped from the dashboard"
	}
	now := s.cfg.Now()
	text, err := mailbox.Encode(mailbox.ShutdownRequest{RequestID: fmt.Sprintf("shutdown-%d@%s", now.UnixMilli(), req.Name),
		From: team.LeadName, Reason: reason, Timestamp: now.UTC().Format(mailbox.TimeLayout)})
	if err != nil {
		http.Error(w, "dashboard: stop: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if _, ok := s.sendAsLead(w, r, r.PathValue("team"), req.Name, text); ok {
		fmt.Fprintf(w, "asked %s to shut down", req.Name)
	}
}

// pendingRequest finds the permission request id in the lead's inbox
// that the page may answer: not a pane teammate's (refuseSigned) and not
// answered yet. It writes the error and reports false otherwise. The
// caller holds s.answering.
func (s *Server) pendingRequest(w http.ResponseWriter, r *http.Request, teamName, id, what string) (string, mailbox.PermissionRequest, bool) {
	ctx := r.Context()
	inbox, err := s.cfg.Mail.Read(ctx, teamName, team.LeadName, false)
	if err != nil {
		http.Error(w, "dashboard: "+what+": read the lead's inbox: "+err.Error(), http.StatusInternalServerError)
		return "", mailbox.PermissionRequest{}, false
	}
	var from string
	var found *mailbox.PermissionRequest
	for _, m := range inbox {
		if f, err := mailbox.Decode(m.Text); err == nil {
			if p, ok := f.(mailbox.PermissionRequest); ok && p.RequestID == id {
				from, found = m.From, &p
			}
		}
	}
	if found == nil {
		http.Error(w, fmt.Sprintf("dashboard: %s: no request %q in the lead's inbox", what, id), http.StatusNotFound)
		return "", mailbox.PermissionRequest{}, false
	}
	if s.refuseSigned(w, r, teamName, from, what) {
		return "", mailbox.PermissionRequest{}, false
	}
	// Already answered (by the lead, or another tab)?
	theirs, err := s.cfg.Mail.Read(ctx, teamName, from, false)
	if err != nil {
		http.Error(w, "dashboard: "+what+": read the inbox of "+from+": "+err.Error(), http.StatusInternalServerError)
		return "", mailbox.PermissionRequest{}, false
	}
	for _, m := range theirs {
		if f, err := mailbox.Decode(m.Text); err == nil {
			if p, ok := f.(mailbox.PermissionResponse); ok && p.RequestID == id {
				http.Error(w, fmt.Sprintf("dashboard: %s: request %s was already answered", what, id), http.StatusConflict)
				return "", mailbox.PermissionRequest{}, false
			}
		}
	}
	return from, *found, true
}

// permission answers a pending permission request in the lead's inbox:
// {"request_id": ID, "decision": "allow"|"always"|"deny", "feedback": TEXT}.
// A question (AskUserQuestion) is answered with answer instead.
func (s *Server) permission(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RequestID string `json:"request_id"`
		Decision  string `json:"decision"`
		Feedback  string `json:"feedback"`
	}
	if !decodeControl(w, r, &req) {
		return
	}
	if req.Decision != "allow" && req.Decision != "always" && req.Decision != "deny" {
		http.Error(w, fmt.Sprintf("dashboard: permission: decision %q: want allow, always or deny", req.Decision), http.StatusBadRequest)
		return
	}
	teamName := r.PathValue("team")
	s.answering.Lock()
	defer s.answering.Unlock()
	from, found, ok := s.pendingRequest(w, r, teamName, req.RequestID, "permission")
	if !ok {
		return
	}
	if found.ToolName == ask.ToolName {
		http.Error(w, fmt.Sprintf("dashboard: permission: request %s is a question to the person: answer it (POST answer)", req.RequestID), http.StatusBadRequest)
		return
	}
	var rules []string
	if req.Decision == "always" {
		if r := swarm.ExactRule(found.ToolName, found.Input); r != "" {
			rules = []string{r} // none names the call exactly: allowed once
		}
	}
	resp, err := swarm.Verdict(found, req.Decision != "deny", rules, strings.TrimSpace(req.Feedback))
	if err != nil {
		http.Error(w, "dashboard: permission: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.reply(w, r, teamName, from, resp, "answered "+from+": "+req.Decision)
}

// answer answers a teammate's pending question (AskUserQuestion,
// docs/ask.md): {"request_id": ID, "answers": {"<question>": "<answer>"}},
// or {"request_id": ID, "decline": true, "feedback": TEXT}.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RequestID string      `json:"request_id"`
		Answers   ask.Answers `json:"answers"`
		Decline   bool        `json:"decline"`
		Feedback  string      `json:"feedback"`
	}
	if !decodeControl(w, r, &req) {
		return
	}
	teamName := r.PathValue("team")
	s.answering.Lock()
	defer s.answering.Unlock()
	from, found, ok := s.pendingRequest(w, r, teamName, req.RequestID, "answer")
	if !ok {
		return
	}
	if found.ToolName != ask.ToolName {
		http.Error(w, fmt.Sprintf("dashboard: answer: request %s asks permission for %s, not a question", req.RequestID, found.ToolName), http.StatusBadRequest)
		return
	}
	if req.Decline {
		why := "the user declined to answer"
		if f := strings.TrimSpace(req.Feedback); f != "" {
			why += ": " + f
		}
		s.reply(w, r, teamName, from, swarm.Unanswered(found, why), "declined "+from+"'s questions")
		return
	}
	in, err := ask.Parse(found.Input)
	if err != nil {
		http.Error(w, "dashboard: answer: the request's questions: "+err.Error(), http.StatusBadRequest)
		return
	}
	req.Answers = pageKeys(req.Answers, in.Questions)
	if err := req.Answers.Check(in.Questions); err != nil {
		http.Error(w, "dashboard: answer: "+err.Error(), http.StatusBadRequest)
		return
	}
	resp, err := swarm.Answered(found, req.Answers)
	if err != nil {
		http.Error(w, "dashboard: answer: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.reply(w, r, teamName, from, resp, "answered "+from+"'s questions")
}

// reply sends resp to from as the lead, and done to the page.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, teamName, from string, resp mailbox.PermissionResponse, done string) {
	text, err := mailbox.Encode(resp)
	if err != nil {
		http.Error(w, "dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if _, ok := s.sendAsLead(w, r, teamName, from, text); ok {
		fmt.Fprint(w, done)
	}
}

// pageKeys maps the keys of answers from the page, which shows each
// question through termtext, back to the questions' own texts.
func pageKeys(a ask.Answers, qs []ask.Question) ask.Answers {
	out := ask.Answers{}
	for k, v := range a {
		for _, q := range qs {
			if k != q.Question && k == termtext.Clean(q.Question) {
				k = q.Question
				break
			}
		}
		out[k] = v
	}
	return out
}
