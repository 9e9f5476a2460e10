package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/tasklist"
)

// The task board (Ctrl+T, /board): the team's shared task list, read
// through Options.Board when the board opens and on each tick while it is
// open, so a claim or a completion shows within a quarter second. Age is
// the time since the board saw a task's state or owner change (the list
// keeps no times itself).

// boardState is what the model knows of the board.
type boardState struct {
	team    string
	tasks   []tasklist.Task
	err     string
	reading bool
	sel     int
	open    string               // the task whose description is open
	scroll  int                  // the open task's first line shown
	seen    map[string]*taskSeen // by id
}

// taskSeen is what the board saw of a task over time.
type taskSeen struct {
	status  tasklist.Status
	owner   string
	changed time.Time
	history []string // "10:02:03 in_progress, alice"
}

// boardMsg is what a read of the board found.
type boardMsg struct {
	team  string
	tasks []tasklist.Task
	err   error
}

// openBoard shows the board and reads it.
func (m *model) openBoard() tea.Cmd {
	if m.opts.Board == nil {
		m.convo.add(entry{kind: entryNotice, text: "No task board here: it belongs to an agent team."})
		m.convo.follow()
		return nil
	}
	m.screen, m.board.open = screenBoard, ""
	return m.readBoard()
}

// readBoard returns the command that reads the board; nil when it is not
// on screen or a read is under way.
func (m *model) readBoard() tea.Cmd {
	if (m.screen != screenBoard && m.screen != screenBoardTask) || m.opts.Board == nil || m.board.reading {
		return nil
	}
	m.board.reading = true
	read, ctx := m.opts.Board, m.ctx
	return func() tea.Msg {
		team, tasks, err := read(ctx)
		return boardMsg{team: team, tasks: tasks, err: err}
	}
}

// boardRead applies a read of the board.
func (m *model) boardRead(msg boardMsg) {
	b := &m.board
	b.reading, b.err = false, ""
	if msg.err != nil {
		b.err = msg.err.Error()
		return
	}
	if b.seen == nil || msg.team != b.team {
		b.seen = map[string]*taskSeen{}
	}
	b.team, b.tasks = msg.team, msg.tasks
	for _, t := range msg.tasks {
		s := b.seen[t.ID]
		if s == nil || s.status != t.Status || s.owner != t.Owner {
			if s == nil {
				s = &taskSeen{}
				b.seen[t.ID] = s
			}
			s.status, s.owner, s.changed = t.Status, t.Owner, m.now
			s.history = append(s.history, fmt.Sprintf("%s %s%s", m.now.Format("15:04:05"), t.Status, ownerNote(t.Owner)))
		}
	}
	b.sel = min(b.sel, max(0, len(b.tasks)-1))
}

func ownerNote(owner string) string {
	if owner == "" {
		return ""
	}
	return ", " + owner
}

func (m *model) boardKey(k tea.KeyPressMsg) tea.Cmd {
	b := &m.board
	if m.screen == screenBoardTask {
		switch k.String() {
		case "esc", "left", "enter":
			m.screen = screenBoard
		case "up", "k":
			b.scroll = max(0, b.scroll-1)
		case "down", "j":
			b.scroll++
		case "pgup":
			b.scroll = max(0, b.scroll-(m.convoHeight()-2))
		case "pgdown", "space":
			b.scroll += m.convoHeight() - 2
		}
		return nil
	}
	switch k.String() {
	case "esc", "left", "ctrl+t":
		m.screen = screenMain
	case "up", "k":
		b.sel = max(0, b.sel-1)
	case "down", "j":
		b.sel = min(b.sel+1, max(0, len(b.tasks)-1))
	case "enter":
		if b.sel < len(b.tasks) {
			b.open, b.scroll, m.screen = b.tasks[b.sel].ID, 0, screenBoardTask
		}
	}
	return nil
}

// boardScreen is the team's task list: id, state, owner in its color,
// subject, what blocks it and the age of its state.
func (m *model) boardScreen(h int) []string {
	b := &m.board
	counts := map[tasklist.Status]int{}
	for _, t := range b.tasks {
		counts[t.Status]++
	}
	title := "Task board"
	if b.team != "" {
		title += " · team " + termtext.Line(b.team)
	}
	out := []string{m.st.bold(title) + m.st.dim(fmt.Sprintf("  %d pending · %d in progress · %d completed", counts[tasklist.StatusPending], counts[tasklist.StatusInProgress], counts[tasklist.StatusCompleted]))}
	if b.err != "" {
		out = append(out, m.st.warn("⚠ "+ansi.Truncate(termtext.Line(b.err), m.width-2, "…")))
	}
	if len(b.tasks) == 0 {
		if b.team == "" {
			return append(out, m.st.dim("No team yet: the board is the team's shared task list."))
		}
		return append(out, m.st.dim("The team has no tasks yet."))
	}
	out = append(out, m.st.dim(fmt.Sprintf("  %-5s %-13s %-12s %6s  %s", "id", "state", "owner", "age", "subject")))
	first := max(0, b.sel-(h-len(out)-1))
	for i := first; i < len(b.tasks) && len(out) < h; i++ {
		t := b.tasks[i]
		state := string(t.Status)
		open := tasklist.OpenBlockers(t, b.tasks)
		if t.Status == tasklist.StatusPending && len(open) > 0 {
			state = "blocked"
		}
		age := ""
		if s := b.seen[t.ID]; s != nil {
			age = fmtAge(m.now.Sub(s.changed))
		}
		owner := termtext.Line(t.Owner)
		if owner == "" {
			owner = "-"
		}
		color := ""
		if mv := m.mateInfo[t.Owner]; mv != nil {
			color = mv.color
		}
		ownerCell := ansi.Truncate(owner, 12, "…")
		ownerCell += strings.Repeat(" ", max(0, 12-ansi.StringWidth(ownerCell)))
		if t.Owner != "" {
			ownerCell = m.st.name(ownerCell, color)
		}
		line := fmt.Sprintf("%-5s %s %-11s ", "#"+termtext.Line(t.ID), boardIcon(state), state) + ownerCell + fmt.Sprintf(" %6s  %s", age, termtext.Line(t.Subject))
		if len(open) > 0 {
			line += m.st.dim(" · blocked by #" + strings.Join(open, ", #"))
		}
		line = ansi.Truncate(line, m.width-2, "…")
		if i == b.sel {
			line = m.st.sel(ansi.Strip(line))
		} else {
			line = "  " + line
		}
		out = append(out, line)
	}
	return out
}

func boardIcon(state string) string {
	switch state {
	case string(tasklist.StatusCompleted):
		return "✓"
	case string(tasklist.StatusInProgress):
		return "●"
	case "blocked":
		return "⊘"
	}
	return "○"
}

// boardTaskScreen is one task of the board: its fields, its whole
// description, and the changes the board saw.
func (m *model) boardTaskScreen(h int) []string {
	b := &m.board
	i := slices.IndexFunc(b.tasks, func(t tasklist.Task) bool { return t.ID == b.open })
	if i < 0 {
		return []string{"Task #" + termtext.Line(b.open) + " is no longer on the board."}
	}
	t := b.tasks[i]
	L := termtext.Line
	var out []string
	out = append(out, wrapped(m.st.bold("#"+L(t.ID)+" "), L(t.Subject), m.width, m.st.bold)...)
	out = append(out, fmt.Sprintf("state: %s%s", t.Status, ownerNote(L(t.Owner))))
	if t.ActiveForm != "" {
		out = append(out, "now: "+L(t.ActiveForm))
	}
	if len(t.BlockedBy) > 0 {
		out = append(out, "blocked by: #"+L(strings.Join(t.BlockedBy, ", #")))
	}
	if len(t.Blocks) > 0 {
		out = append(out, "blocks: #"+L(strings.Join(t.Blocks, ", #")))
	}
	out = append(out, m.st.dim(strings.Repeat("─", m.width)))
	if strings.TrimSpace(t.Description) == "" {
		out = append(out, m.st.dim("(no description)"))
	} else {
		out = append(out, markdown(m.st, termtext.Clean(t.Description), m.width)...)
	}
	if s := b.seen[t.ID]; s != nil && len(s.history) > 0 {
		out = append(out, "", m.st.dim("seen on the board:"))
		for _, l := range s.history {
			out = append(out, m.st.dim("  "+L(l)))
		}
	}
	b.scroll = min(b.scroll, max(0, len(out)-h))
	return out[b.scroll:]
}

// BoardOf is the Options.Board a caller builds from a task store: the
// tasks of the team team() names ("" when there is none).
func BoardOf(store tasklist.Store, team func() string) func(ctx context.Context) (string, []tasklist.Task, error) {
	return func(ctx context.Context) (string, []tasklist.Task, error) {
		name := team()
		if name == "" {
			return "", nil, nil
		}
		ts, err := tasklist.New(store, name).Tasks(ctx)
		return name, ts, err
	}
}
