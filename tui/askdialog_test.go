package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/session"
)

func answersText(a ask.Answers) string {
	var parts []string
	for k, v := range a {
		parts = append(parts, fmt.Sprintf("%q=%q", k, v))
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// questions is a set of three: one with previews, one multiSelect, one
// plain.
func questions() []ask.Question {
	return []ask.Question{
		{Question: "Which layout should the settings page use?", Header: "Layout", Options: []ask.Option{
			{Label: "Two columns (Recommended)", Description: "Navigation on the left, the form on the right.", Preview: "┌────────┬──────────────┐\n│ General│ Name  [____] │\n│ Keys   │ Email [____] │\n│ Billing│      [Save]  │\n└────────┴──────────────┘"},
			{Label: "Tabs", Description: "One tab per section, the form below.", Preview: "[General] [Keys] [Billing]\n-------------------------\nName  [____]\nEmail [____]"},
			{Label: "One long page", Description: "Every section on one scrolling page."},
		}},
		{Question: "Which checks should run on every push?", Header: "CI checks", MultiSelect: true, Options: []ask.Option{
			{Label: "Unit tests", Description: "go test ./..."},
			{Label: "Race detector", Description: "go test -race, slower"},
			{Label: "Lint", Description: "go vet and staticcheck"},
		}},
		{Question: "Who should review the change?", Header: "Reviewer", Options: []ask.Option{
			{Label: "Alice", Description: "Owns the settings code."},
			{Label: "Bob", Description: "Owns CI."},
		}},
	}
}

func askSet(m *model, id, agent string, qs []ask.Question) {
	q := session.Question{ID: id, Agent: agent, Questions: qs, Reason: "question"}
	if agent != "team-lead" {
		q.Color, q.Teammate = "green", true
	}
	ev(m, session.Event{Kind: session.KindPermission, Question: &q, Queued: 1})
}

// Golden frames of the question dialog: options on the left and the
// focused option's preview beside them at 200x60, below them at 80x24;
// then the multiSelect question with two ticked, and "Other" open.
func TestFramesAsk(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		m, _ := newTest(t)
		conversation(m)
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		askSet(m, "q1", "alice", questions())
		name := fmt.Sprintf("ask-%dx%d", sz[0], sz[1])
		golden(t, m, name)
		frame := ansi.Strip(m.frame())
		if !strings.Contains(frame, "│ General│") {
			t.Errorf("%s: the focused option's preview is not shown:\n%s", name, frame)
		}
		press(m, "down")
		if frame := ansi.Strip(m.frame()); !strings.Contains(frame, "[General] [Keys] [Billing]") || strings.Contains(frame, "│ General│") {
			t.Errorf("%s: ↓ did not show the second option's preview:\n%s", name, frame)
		}
		press(m, "tab", "1", "3")
		golden(t, m, name+"-multi")
		press(m, "4", "Docs")
		golden(t, m, name+"-other")
	}
}

// Choosing answers every question; the last one sends them all, with
// the multiSelect labels joined and "Other" text as typed.
func TestAskAnswers(t *testing.T) {
	m, r := newTest(t)
	askSet(m, "q1", "team-lead", questions())
	press(m, "2")                                 // Layout: Tabs; moves to CI checks
	press(m, " ", "down", "down", " ")            // Unit tests, Lint
	press(m, "enter")                             // moves to Reviewer
	press(m, "3", "Carol, she wrote it", "enter") // Other
	want := `answer q1 allow=true answers={"Which checks should run on every push?"="Unit tests, Lint","Which layout should the settings page use?"="Tabs","Who should review the change?"="Carol, she wrote it"} msg=""`
	if len(r.calls) != 1 || r.calls[0] != want {
		t.Fatalf("calls %q; want [%s]", r.calls, want)
	}
	if len(m.questions) != 0 || m.pick != nil {
		t.Fatalf("the dialog stays open after the last answer: %d questions", len(m.questions))
	}
}

// Esc declines (the model is told the person declined); Esc in the
// Other field only closes it; Enter on an empty multiSelect refuses.
func TestAskDecline(t *testing.T) {
	m, r := newTest(t)
	askSet(m, "q1", "team-lead", questions()[1:2])
	press(m, "enter")
	if frame := m.frame(); !strings.Contains(frame, "Tick at least one choice") || len(r.calls) != 0 {
		t.Fatalf("Enter with nothing ticked: calls %q, frame:\n%s", r.calls, frame)
	}
	press(m, "4", "x", "esc")
	if len(r.calls) != 0 || m.pick.typing {
		t.Fatalf("Esc in the Other field: calls %q, typing %v; want it closed, nothing sent", r.calls, m.pick.typing)
	}
	press(m, "esc")
	if want := `answer q1 allow=false always=false rule="" msg="the user declined to answer"`; len(r.calls) != 1 || r.calls[0] != want {
		t.Fatalf("calls %q; want [%s]", r.calls, want)
	}
}

// Model text in a question reaches the screen escaped.
func TestAskHostile(t *testing.T) {
	m, _ := newTest(t)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	askSet(m, "q1", "ev\u202eil", []ask.Question{{Question: "Run " + concealed + "?", Header: "x\u202ey", Options: []ask.Option{
		{Label: "yes" + osc, Description: c1, Preview: rlo + "\n" + concealed}, {Label: "no", Description: "n"}}}})
	frame := m.frame()
	for _, bad := range []string{"\x1b[8m", "\x1b]", "\u009b", "\u202e", "\u200b", "\x07"} {
		if strings.Contains(frame, bad) {
			t.Errorf("%q reached the screen:\n%q", bad, frame)
		}
	}
}

// A preview taller than the screen scrolls with PgDn, the answers staying.
func TestAskLongPreview(t *testing.T) {
	m, r := newTest(t)
	var b strings.Builder
	for i := range 80 {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	askSet(m, "q1", "team-lead", []ask.Question{{Question: "Which?", Header: "H", Options: []ask.Option{
		{Label: "A", Description: "a", Preview: b.String() + "LAST"}, {Label: "B", Description: "b"}}}})
	if strings.Contains(m.frame(), "LAST") || !moreBelow.MatchString(ansi.Strip(m.frame())) {
		t.Fatalf("the long preview is not cut with a marker:\n%s", m.frame())
	}
	press(m, "end")
	if frame := ansi.Strip(m.frame()); !strings.Contains(frame, "LAST") || !strings.Contains(frame, "Esc decline") {
		t.Fatalf("End did not reach the preview's end with the keys on screen:\n%s", frame)
	}
	press(m, "1")
	if len(r.calls) != 1 || !strings.Contains(r.calls[0], `"Which?"="A"`) {
		t.Fatalf("calls %q", r.calls)
	}
}

// A question withdrawn while its Other field is open (the turn was
// interrupted) closes the dialog and leaves the prompt empty.
func TestAskWithdrawn(t *testing.T) {
	m, r := newTest(t)
	askSet(m, "q1", "team-lead", questions()[2:])
	press(m, "3", "half typed")
	q := session.Question{ID: "q1", Agent: "team-lead", Questions: questions()[2:]}
	ev(m, session.Event{Kind: session.KindPermissionAnswer, Question: &q})
	if m.pick != nil || m.input.Value() != "" || len(m.questions) != 0 || len(r.calls) != 0 {
		t.Fatalf("after withdrawal: pick %v, prompt %q, %d questions, calls %q", m.pick, m.input.Value(), len(m.questions), r.calls)
	}
	if frame := m.frame(); strings.Contains(frame, "Who should review") {
		t.Fatalf("the dialog stays:\n%s", frame)
	}
}

// At every size the dialog fills the window exactly, no line is wider
// than it, and "Esc decline" stays on screen.
func TestAskSizes(t *testing.T) {
	for _, sz := range [][2]int{{20, 8}, {40, 12}, {99, 30}, {100, 30}} {
		m, _ := newTest(t)
		conversation(m)
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		askSet(m, "q1", "alice", questions())
		for _, keys := range [][]string{nil, {"down"}, {"tab"}, {"tab", "4"}} {
			press(m, keys...)
			frame := ansi.Strip(m.frame())
			lines := strings.Split(frame, "\n")
			if len(lines) != m.height {
				t.Errorf("%dx%d after %q: %d lines", sz[0], sz[1], keys, len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > m.width {
					t.Errorf("%dx%d after %q: line %d is %d wide: %q", sz[0], sz[1], keys, i, w, l)
				}
			}
			flat := strings.ReplaceAll(strings.ReplaceAll(frame, "\n", " "), "  ", " ")
			if !strings.Contains(flat, "decline") && !strings.Contains(flat, "Enter sends") {
				t.Errorf("%dx%d after %q: the keys are off screen:\n%s", sz[0], sz[1], keys, frame)
			}
		}
	}
}
