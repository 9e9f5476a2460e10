package tui

import (
	"charm.land/bubbles/v2/textarea"
	"charm.land/lipgloss/v2"

	"github.com/troupe-dev/troupe/internal/termtext"
)

// inputStyles are the prompt's: plain with NO_COLOR, else quiet (no
// background, the placeholder dim).
func inputStyles(plain bool) textarea.Styles {
	var st textarea.StyleState
	if !plain {
		st.Placeholder = styleDim
		st.Prompt = styleAccent
	}
	return textarea.Styles{Focused: st, Blurred: st}
}

// styles renders text in the lead's colors, or plain with NO_COLOR.
type styles struct {
	plain bool
}

func newStyles(noColor bool) styles { return styles{plain: noColor} }

func (s styles) with(st lipgloss.Style, text string) string {
	if s.plain || text == "" {
		return text
	}
	return st.Render(text)
}

var (
	styleDim    = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleGood   = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	styleBad    = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleWarn   = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	styleBold   = lipgloss.NewStyle().Bold(true)
	styleCode   = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	styleUser   = lipgloss.NewStyle().Foreground(lipgloss.Color("7"))
	styleAccent = lipgloss.NewStyle().Foreground(lipgloss.Color("5")).Bold(true)
	styleSel    = lipgloss.NewStyle().Reverse(true)
)

func (s styles) dim(t string) string    { return s.with(styleDim, t) }
func (s styles) good(t string) string   { return s.with(styleGood, t) }
func (s styles) bad(t string) string    { return s.with(styleBad, t) }
func (s styles) warn(t string) string   { return s.with(styleWarn, t) }
func (s styles) bold(t string) string   { return s.with(styleBold, t) }
func (s styles) code(t string) string   { return s.with(styleCode, t) }
func (s styles) user(t string) string   { return s.with(styleUser, t) }
func (s styles) accent(t string) string { return s.with(styleAccent, t) }
func (s styles) sel(t string) string {
	if s.plain {
		return "» " + t
	}
	return s.with(styleSel, t)
}
func (s styles) userPrefix(t string) string { return s.with(styleAccent, t) }

// teamColors maps the team file's color names to terminal colors.
var teamColors = map[string]string{
	"red": "9", "blue": "12", "green": "10", "yellow": "11", "purple": "13",
	"orange": "208", "pink": "218", "cyan": "14",
}

// name renders a teammate's name in its color, its control and
// invisible characters escaped (termtext).
func (s styles) name(name, color string) string {
	name = termtext.Line(name)
	c, ok := teamColors[color]
	if !ok {
		return s.bold(name)
	}
	return s.with(lipgloss.NewStyle().Foreground(lipgloss.Color(c)).Bold(true), name)
}

// dot is a teammate's status dot.
func (s styles) dot(state string) string {
	switch state {
	case "working":
		return s.good("●")
	case "idle":
		return s.dim("○")
	case "waiting", "plan":
		return s.warn("?")
	case "stopping":
		return s.warn("◌")
	case "stopped":
		return s.dim("■")
	case "dead":
		return s.bad("✗")
	}
	return s.dim("·") // shut down
}
