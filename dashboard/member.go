package dashboard

import (
	"net/http"

	"github.com/troupe-dev/troupe/internal/termtext"
)

// MaxTranscript bounds the transcript text a member page shows; its end
// is kept.
const MaxTranscript = 256 << 10

// memberPage is a member's page: who it is and its transcript.
type memberPage struct {
	memberView
	Team       string
	Transcript string // as Config.Transcript renders it, cleaned; "" when unknown
	Missing    string // why there is no transcript
}

// member serves a member's page: its state, what it spent, and its
// transcript in the lead's session, when Config.Transcript reaches it.
func (s *Server) member(w http.ResponseWriter, r *http.Request) {
	v, err := s.load(r.Context(), r.PathValue("team"))
	if err != nil {
		s.fail(w, err)
		return
	}
	name := r.PathValue("name")
	var p memberPage
	found := false
	for _, m := range v.Members {
		if m.Name == termtext.Line(name) {
			p.memberView, found = m, true
			break
		}
	}
	if !found {
		http.Error(w, "dashboard: team "+v.Name+" has no member "+termtext.Line(name), http.StatusNotFound)
		return
	}
	p.Team = v.Name
	agent := name
	if p.State == "lead" {
		agent = "lead" // the lead's transcript in its session
	}
	switch {
	case s.cfg.Transcript == nil:
		p.Missing = "This dashboard reads no transcripts."
	case v.session == "":
		p.Missing = "The team file names no lead session, so there is no transcript to read."
	default:
		text, ok := s.cfg.Transcript(v.session, agent)
		if !ok {
			p.Missing = "No transcript of " + p.Name + " is reachable from here (the session ran on another machine, or it has not started one yet)."
			break
		}
		if len(text) > MaxTranscript {
			text = "…\n" + text[len(text)-MaxTranscript:]
		}
		p.Transcript = termtext.Clean(text)
	}
	s.render(w, "member.html", p)
}
