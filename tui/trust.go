package tui

import (
	"context"
	"errors"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/internal/termtext"
)

// TrustQuestion is the question asked before troupe runs anything of a
// folder the person has not trusted (or whose hooks or MCP servers
// changed since): what the folder's own files would do, and whether to
// trust it.
type TrustQuestion struct {
	Dir string
	// Changed: the folder was trusted, and Lines say what changed since.
	Changed bool
	// Lines are what the folder's files would do (hooks, MCP servers,
	// modes, directories, agent definitions' modes), one a line.
	Lines  []string
	Input  io.Reader
	Output io.Writer
}

// AskTrust shows q full screen until the person answers: Enter or y
// trusts the folder (true), Esc, n, q or Ctrl+C refuses (false).
func AskTrust(ctx context.Context, q TrustQuestion) (bool, error) {
	m := &trustModel{q: q, width: 80, height: 24}
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if q.Input != nil {
		opts = append(opts, tea.WithInput(q.Input))
	}
	if q.Output != nil {
		opts = append(opts, tea.WithOutput(q.Output))
	}
	if _, err := tea.NewProgram(m, opts...).Run(); err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, err
	}
	return m.yes, nil
}

type trustModel struct {
	q             TrustQuestion
	width, height int
	yes, done     bool
}

func (m *trustModel) Init() tea.Cmd { return nil }

func (m *trustModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 8)
	case tea.KeyPressMsg:
		switch msg.String() {
		case "enter", "y", "Y":
			m.yes, m.done = true, true
			return m, tea.Quit
		case "esc", "n", "N", "q", "ctrl+c":
			m.done = true
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m *trustModel) View() tea.View {
	if m.done {
		return tea.NewView("")
	}
	var b strings.Builder
	line := func(s string) {
		for _, l := range strings.Split(ansi.Wrap(s, m.width, " "), "\n") {
			b.WriteString(l + "\n")
		}
	}
	dir := termtext.Line(m.q.Dir)
	if m.q.Changed {
		line("Do you trust the changes in this folder?")
		line("")
		line(dir)
		line("")
		line("It was trusted, but what its files can run changed since:")
	} else {
		line("Do you trust the files in this folder?")
		line("")
		line(dir)
		line("")
		line("troupe reads this folder's own settings, .mcp.json and agent definitions. They come with the folder (a cloned repository may hold anything): until you trust it, none of what follows is honoured.")
		if len(m.q.Lines) > 0 {
			line("")
			line("This folder's files would:")
		}
	}
	for _, l := range m.q.Lines {
		line("  " + termtext.Line(l)) // model or repository text: escapes shown, never obeyed
	}
	if !m.q.Changed && len(m.q.Lines) == 0 {
		line("")
		line("Its files ask for nothing of that kind now.")
	}
	line("")
	line("Enter: trust this folder (and its subfolders) and continue · Esc: leave without running anything")
	v := tea.NewView(b.String())
	v.AltScreen = true
	return v
}
