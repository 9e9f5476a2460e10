package dashboard

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/team"
)

// teamRow is one line of the teams page.
type teamRow struct {
	Name, Description string
	Members, Active   int
}

// teams serves the list of teams.
func (s *Server) teams(w http.ResponseWriter, r *http.Request) {
	all, err := s.cfg.Teams.List(r.Context())
	var problem string
	if err != nil {
		// List returns the good teams alongside the error.
		problem = termtext.Line(err.Error())
	}
	rows := make([]teamRow, 0, len(all))
	for _, c := range all {
		row := teamRow{Name: termtext.Line(c.Name), Description: termtext.Line(c.Description), Members: len(c.Members)}
		for _, m := range c.Members {
			if !m.IsLead() && m.Active() {
				row.Active++
			}
		}
		rows = append(rows, row)
	}
	s.render(w, "teams.html", struct {
		Teams   []teamRow
		Problem string
	}{rows, problem})
}

// team serves one team's page, rendered from the current state; the page's
// script then follows the event stream.
func (s *Server) team(w http.ResponseWriter, r *http.Request) {
	v, err := s.load(r.Context(), r.PathValue("team"))
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, "team.html", v)
}

// fail answers a store error: 404 for an unknown team.
func (s *Server) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, team.ErrNotFound) {
		http.Error(w, "dashboard: "+termtext.Line(err.Error()), http.StatusNotFound)
		return
	}
	s.cfg.Log.Warn("dashboard: read stores", "err", err)
	http.Error(w, "dashboard: "+termtext.Line(err.Error()), http.StatusInternalServerError)
}

// render executes a template into a buffer first, so that a template error
// is a clean 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages.ExecuteTemplate(&buf, name, data); err != nil {
		s.cfg.Log.Error("dashboard: render", "page", name, "err", err)
		http.Error(w, fmt.Sprintf("dashboard: render %s: %v", name, err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = buf.WriteTo(w)
}
