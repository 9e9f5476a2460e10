package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

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

// permission answers a pending permission request in the lead's inbox:
// {"request_id": ID, "decision": "allow"|"always"|"deny", "feedback": TEXT}.
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
	ctx := r.Context()
	teamName := r.PathValue("team")
	s.answering.Lock()
	defer s.answering.Unlock()
	inbox, err := s.cfg.Mail.Read(ctx, teamName, team.LeadName, false)
	if err != nil {
		http.Error(w, "dashboard: permission: read the lead's inbox: "+err.Error(), http.StatusInternalServerError)
		return
	}
	var from string
	var found *mailbox.PermissionRequest
	for _, m := range inbox {
		if f, err := mailbox.Decode(m.Text); err == nil {
			if p, ok := f.(mailbox.PermissionRequest); ok && p.RequestID == req.RequestID {
				from, found = m.From, &p
			}
		}
	}
	if found == nil {
		http.Error(w, fmt.Sprintf("dashboard: permission: no request %q in the lead's inbox", req.RequestID), http.StatusNotFound)
		return
	}
	if s.refuseSigned(w, r, teamName, from, "permission") {
		return
	}
	// Already answered (by the lead, or another tab)?
	theirs, err := s.cfg.Mail.Read(ctx, teamName, from, false)
	if err != nil {
		http.Error(w, "dashboard: permission: read the inbox of "+from+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	for _, m := range theirs {
		if f, err := mailbox.Decode(m.Text); err == nil {
			if p, ok := f.(mailbox.PermissionResponse); ok && p.RequestID == req.RequestID {
				http.Error(w, fmt.Sprintf("dashboard: permission: request %s was already answered", req.RequestID), http.StatusConflict)
				return
			}
		}
	}
	var rules []string
	if req.Decision == "always" {
		if r := swarm.ExactRule(found.ToolName, found.Input); r != "" {
			rules = []string{r} // none names the call exactly: allowed once
		}
	}
	resp, err := swarm.Verdict(*found, req.Decision != "deny", rules, strings.TrimSpace(req.Feedback))
	if err != nil {
		http.Error(w, "dashboard: permission: "+err.Error(), http.StatusBadRequest)
		return
	}
	text, err := mailbox.Encode(resp)
	if err != nil {
		http.Error(w, "dashboard: permission: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if _, ok := s.sendAsLead(w, r, teamName, from, text); ok {
		fmt.Fprintf(w, "answered %s: %s", from, req.Decision)
	}
}
