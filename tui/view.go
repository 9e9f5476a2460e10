package tui

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/task"
)

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (m *model) View() tea.View {
	v := tea.NewView(m.frame())
	v.AltScreen = !m.opts.NoAltScreen
	if v.AltScreen { // inline, the wheel scrolls the terminal's scrollback
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.WindowTitle = "troupe"
	if c := m.input.Cursor(); c != nil && m.inputRow >= 0 && m.screen != screenTasks && m.screen != screenTask && m.screen != screenResume && m.screen != screenBoard && m.screen != screenBoardTask && !m.workflowScreens() {
		c.Position.Y += m.inputRow
		v.Cursor = c
	}
	if m.quitting {
		v.Content = ""
		v.Cursor = nil
	}
	return v
}

// frame renders the whole screen: exactly m.height lines of at most
// m.width cells.
func (m *model) frame() string {
	bottom, at := m.bottom()
	h := m.height - len(bottom)
	var top []string
	switch m.screen {
	case screenTeammate:
		top = m.mateScreen(h)
	case screenTasks:
		top = m.tasksScreen(h)
	case screenTask:
		top = m.taskScreen(h)
	case screenResume:
		top = m.resumeScreen(h)
	case screenBoard:
		top = m.boardScreen(h)
	case screenBoardTask:
		top = m.boardTaskScreen(h)
	case screenWorkflows:
		top = m.workflowsScreen(h)
	case screenWorkflow:
		top = m.workflowScreen(h)
	case screenWorkflowAgent:
		top = m.workflowAgentScreen(h)
	default:
		switch {
		case len(m.convo.entries) == 0:
			top = m.welcome()
		case m.printer != nil:
			top = m.live(h) // inline.go: the rest is in the scrollback
		default:
			top = m.convo.view(m.st, h, m.now)
		}
	}
	if m.printer == nil || m.screen != screenMain {
		top = fit(top, h)
	}
	lines := append(top, bottom...)
	m.inputRow = -1
	if at >= 0 {
		m.inputRow = len(top) + at
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > m.width {
			lines[i] = ansi.Truncate(l, m.width, "")
		}
	}
	return strings.Join(lines, "\n")
}

// fit pads or cuts lines to exactly h.
func fit(lines []string, h int) []string {
	if len(lines) > h {
		return lines[len(lines)-h:]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines
}

// convoHeight is how many lines the conversation gets.
func (m *model) convoHeight() int {
	b, _ := m.bottom()
	return max(1, m.height-len(b))
}

// bottom renders what is below the conversation: the status line, the
// prompt or the open dialog, and the footer. at is the line where the
// prompt's text starts, -1 when no prompt shows.
func (m *model) bottom() (out []string, at int) {
	at = -1
	foot := m.footer()
	if len(m.questions) > 0 {
		// The dialog gets all but a line of conversation and the footer;
		// its answers stay on screen (dialog.go).
		var dialog []string
		dialog, at = m.questionDialog(max(3, m.height-1-len(foot)))
		out = append(out, dialog...)
	} else {
		if m.screen == screenMain {
			for _, p := range m.pending { // typed while the lead works: below its answer
				out = append(out, wrapped(m.st.dim("> (waiting) "), termtext.Line(p), m.width, m.st.dim)...)
			}
		}
		out = append(out, m.status()...)
		out = append(out, m.st.dim(strings.Repeat("─", m.width)))
		in := m.inputView()
		if m.input.Focused() && in != "" && !(m.screen == screenTasks || m.screen == screenTask || m.screen == screenResume || m.screen == screenBoard || m.screen == screenBoardTask || m.workflowScreens()) && m.confirmed == "" {
			at = len(out)
		}
		out = append(out, strings.Split(in, "\n")...)
	}
	out = append(out, foot...)
	// Keep at least a few lines for the conversation (one above a
	// dialog).
	keep := m.height - 3
	if len(m.questions) > 0 {
		keep = m.height - 1
	}
	if len(out) > keep {
		cut := len(out) - keep
		out = out[cut:]
		if at -= cut; at < 0 {
			at = -1
		}
	}
	return out, at
}

func (m *model) inputView() string {
	switch m.screen {
	case screenTeammate:
		if m.confirmed == "stop" {
			return m.st.warn(fmt.Sprintf("Stop %s? Ctrl+X again stops it, any other key keeps it", termtext.Line(m.viewMate)))
		}
		m.input.Placeholder = "Message " + termtext.Line(m.viewMate) + " (Enter sends)"
	case screenTasks:
		return m.st.dim("↑↓ select · Enter open · x stop · f foreground a turn · Esc back")
	case screenTask:
		return m.st.dim("↑↓ PgUp/PgDn scroll · x stop · f foreground a turn · Esc back")
	case screenResume:
		return m.st.dim("↑↓ select · Enter continues that session (this one is kept) · Esc back")
	case screenBoard:
		return m.st.dim("↑↓ select · Enter opens a task · Esc back · /tasks lists background work")
	case screenBoardTask:
		return m.st.dim("↑↓ PgUp/PgDn scroll · Esc back to the board")
	case screenWorkflows:
		return m.st.dim("↑↓ select · Enter opens a run · Esc back")
	case screenWorkflow:
		return m.st.dim("↑↓ select an agent · Enter opens it · x stops the run · Esc back to the runs")
	case screenWorkflowAgent:
		return m.st.dim(m.wfAgentKeys()) // workflows.go
	default:
		m.input.Placeholder = "Ask the lead (Enter sends, Ctrl+J new line, / for commands)"
	}
	v := m.input.View()
	if c := m.completions(); len(c) > 0 && m.screen == screenMain {
		var names []string
		for _, n := range c {
			names = append(names, "/"+n)
		}
		v += "\n" + m.st.dim(ansi.Truncate(strings.Join(names, "  "), m.width, "…"))
	}
	return v
}

// status is what is above the prompt: the latest notice, and the
// spinner under it while the lead works (one line at least). In a
// teammate's view, its keys when there is no notice.
func (m *model) status() []string {
	var out []string
	if m.notice != "" {
		out = append(out, m.st.warn(termtext.Line(m.notice)))
	}
	if m.working && m.screen != screenTeammate {
		el := m.now.Sub(m.turnStart).Round(time.Second)
		if m.turnStart.IsZero() || el < 0 {
			el = 0
		}
		act := m.activity
		if act == "" {
			act = "Working"
		}
		out = append(out, fmt.Sprintf("%s %s… %s", m.st.accent(spinFrames[m.spin%len(spinFrames)]), termtext.Line(act),
			m.st.dim(fmt.Sprintf("(%s · %s tokens · Esc to interrupt · Ctrl+B to background)", el, tokens(m.usage.TotalInput()+m.usage.OutputTokens)))))
	}
	if len(out) == 0 && m.screen == screenTeammate {
		out = append(out, m.st.dim(ansi.Truncate("Esc interrupts "+termtext.Line(m.viewMate)+" · ← back · /stop or Ctrl+X twice stops · PgUp/PgDn scroll", m.width, "…")))
	}
	if len(out) == 0 {
		out = append(out, "")
	}
	return out
}

// footer is the pills line and the teammate strip.
func (m *model) footer() []string {
	var parts []string
	for _, p := range m.pills() {
		parts = append(parts, m.st.accent(p))
	}
	spent := tokens(m.usage.TotalInput()+m.usage.OutputTokens) + " tokens"
	if m.opts.Spent != nil {
		spent = m.spent.String() // spent.go
	} else if m.opts.Cost != nil {
		if usd, ok := m.opts.Cost(m.usage); ok {
			if usd < 1 {
				spent += fmt.Sprintf(" · $%.3f", usd)
			} else {
				spent += fmt.Sprintf(" · $%.2f", usd)
			}
		}
	}
	parts = append(parts, "mode: "+m.mode, spent)
	out := []string{strings.Join(parts, m.st.dim(" · "))}
	if len(m.mates) > 0 {
		out = append(out, m.strip())
	}
	return out
}

// pills counts the active background work by kind, as the seed's footer
// does: "2 shells", "1 agent", "1 remote agent", "3 teammates", "dreaming".
func (m *model) pills() []string {
	counts := map[task.Type]int{}
	for _, tv := range m.tasks {
		if sh, ok := tv.state.Detail.(*task.Shell); ok && sh.Kind == "monitor" {
			continue // a monitor's own shell: its monitor_mcp task is the pill
		}
		if tv.state.Status.Active() {
			counts[tv.state.Type]++
		}
	}
	var out []string
	add := func(t task.Type, one, many string) {
		if n := counts[t]; n == 1 {
			out = append(out, "1 "+one)
		} else if n > 1 {
			out = append(out, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(task.LocalBash, "shell", "shells")
	add(task.LocalAgent, "agent", "agents")
	add(task.RemoteAgent, "remote agent", "remote agents")
	add(task.InProcessTeammate, "teammate", "teammates")
	add(task.LocalWorkflow, "workflow", "workflows")
	add(task.MonitorMCP, "monitor", "monitors")
	if counts[task.Dream] > 0 {
		out = append(out, "dreaming")
	}
	if p := m.loopPill(); p != "" { // loop.go
		out = append(out, p)
	}
	return out
}

// strip is the teammate strip: a colored name, a status dot and the
// current activity for each, scrolled to keep the selected one visible.
func (m *model) strip() string {
	var cells []string
	for i, n := range m.mates {
		mv := m.mateInfo[n]
		state := m.mateState(mv)
		act := state
		if tv := m.tasks[mv.task]; tv != nil && tv.tail != "" && state == "working" {
			act = tv.tail
		}
		cell := m.st.dot(state) + " " + m.st.name(n, mv.color) + " " + m.st.dim(ansi.Truncate(termtext.Line(act), 24, "…"))
		if i == m.selMate {
			cell = m.st.sel(ansi.Strip(cell))
		}
		cells = append(cells, cell)
	}
	first := 0
	for first < m.selMate && ansi.StringWidth(strings.Join(cells[first:m.selMate+1], "  ")) > m.width {
		first++
	}
	line := strings.Join(cells[first:], "  ")
	if first > 0 {
		line = "‹ " + line
	}
	return line
}

// mateScreen is one teammate's view: who, what it does, its timeline.
func (m *model) mateScreen(h int) []string {
	mv := m.mateInfo[m.viewMate]
	if mv == nil {
		return []string{"No teammate " + termtext.Line(m.viewMate)}
	}
	state := m.mateState(mv)
	head := []string{m.st.dot(state) + " " + m.st.name(mv.name, mv.color) + " · " + state + modelNote(termtext.Line(mv.model))}
	if tv := m.tasks[mv.task]; tv != nil {
		if d, ok := tv.state.Detail.(*task.Teammate); ok {
			head = append(head, m.st.dim(fmt.Sprintf("task %s · %d tool uses · %s tokens · %s", tv.state.ID, d.Usage.ToolUses, tokens(d.Usage.TotalTokens), fmtDur(m.now.Sub(tv.state.Start)))))
			if d.Prompt != "" {
				head = append(head, ansi.Truncate("prompt: "+termtext.Line(firstLineOf(d.Prompt)), m.width, "…"))
			}
			if len(d.Recent) > 0 {
				head = append(head, "recent:")
				for _, r := range d.Recent {
					head = append(head, "  "+ansi.Truncate(termtext.Line(r), m.width-2, "…"))
				}
			}
		}
	}
	head = append(head, m.st.dim(strings.Repeat("─", m.width)))
	room := h - len(head)
	if mv.readErr != "" {
		room--
	}
	if room < 0 {
		return head[:h]
	}
	var body []string
	if len(mv.convo.entries) > 0 { // its transcript: what it wrote and did
		mv.convo.width = m.width
		body = mv.convo.view(m.st, room, m.now)
	} else {
		for _, l := range mv.lines {
			body = append(body, strings.Split(ansi.Wrap(termtext.Clean(l), m.width, " "), "\n")...)
		}
		body = fit(body, room)
	}
	if mv.readErr != "" {
		body = append(body, m.st.warn("transcript: "+ansi.Truncate(termtext.Line(mv.readErr), m.width-12, "…")))
	}
	return append(head, body...)
}

func modelNote(model string) string {
	if model == "" {
		return ""
	}
	return " · " + model
}

// tasksScreen lists the tasks: type, state, elapsed, what it does.
func (m *model) tasksScreen(h int) []string {
	list := m.visibleTasks()
	out := []string{m.st.bold(fmt.Sprintf("Tasks (%d)", len(list)))}
	if len(list) == 0 {
		out = append(out, m.st.dim("No background tasks."))
	}
	m.selTask = min(m.selTask, max(0, len(list)-1))
	first := max(0, m.selTask-(h-2))
	for i := first; i < len(list); i++ {
		tv := list[i]
		st := tv.state
		end := m.now
		if !tv.ended.IsZero() {
			end = tv.ended
		}
		line := fmt.Sprintf("%s %-9s %-19s %-9s %6s  %s", statusIcon(st.Status), termtext.Line(string(st.ID)), st.Type, st.Status, fmtAge(end.Sub(st.Start)), termtext.Line(st.Description))
		if tv.tail != "" {
			line += m.st.dim(" · " + termtext.Line(tv.tail))
		}
		line = ansi.Truncate(line, m.width-2, "…")
		if i == m.selTask {
			line = m.st.sel(ansi.Strip(line))
		} else {
			line = "  " + line
		}
		out = append(out, line)
	}
	return out
}

// taskScreen is one task's detail, by type.
func (m *model) taskScreen(h int) []string {
	tv := m.tasks[m.viewTask]
	if tv == nil {
		return []string{"The task is gone."}
	}
	st := tv.state
	L := termtext.Line // every field below may hold a model's text
	out := []string{m.st.bold(fmt.Sprintf("%s %s · %s · %s", statusIcon(st.Status), L(string(st.ID)), st.Type, st.Status)), L(st.Description)}
	switch d := st.Detail.(type) {
	case *task.Shell:
		out = append(out, "$ "+L(d.Command))
		if st.Status.Terminal() {
			out = append(out, fmt.Sprintf("exit code %d", d.ExitCode))
		}
		if tv.tail != "" {
			out = append(out, m.st.dim("latest output:"), L(tv.tail))
		}
		if st.OutputFile != "" {
			out = append(out, m.st.dim("output file: "+L(st.OutputFile)))
		}
	case *task.Agent:
		if d.AgentType != "" {
			out = append(out, "type: "+L(d.AgentType))
		}
		out = append(out, "prompt: "+L(firstLineOf(d.Prompt)))
		out = append(out, fmt.Sprintf("%d tool uses · %s tokens", d.Usage.ToolUses, tokens(d.Usage.TotalTokens)))
		if tv.tail != "" {
			out = append(out, "now: "+L(tv.tail))
		}
		if d.Result != "" {
			out = append(out, m.st.dim("result:"))
			out = append(out, strings.Split(ansi.Wrap(termtext.Clean(d.Result), m.width, " "), "\n")...)
		}
		if d.Error != "" {
			out = append(out, m.st.bad("error: "+L(d.Error)))
		}
	case *task.Remote:
		out = append(out, fmt.Sprintf("worker: %s · attempt %d", L(d.Worker), d.Attempt))
		if d.Progress != "" {
			out = append(out, "now: "+L(d.Progress))
		}
		if d.Result != "" {
			out = append(out, strings.Split(ansi.Wrap(termtext.Clean(d.Result), m.width, " "), "\n")...)
		}
		if d.Error != "" {
			out = append(out, m.st.bad("error: "+L(d.Error)))
		}
	case *task.Monitor:
		out = append(out, fmt.Sprintf("watching %s: %s", L(d.Source), L(d.Target)))
		if d.Filter != "" {
			out = append(out, "filter: "+L(d.Filter))
		}
		out = append(out, fmt.Sprintf("%d lines seen · %d matched · %s", d.Seen, d.Matched, plural(d.Wakes, "wake")))
		if d.LastLine != "" {
			out = append(out, m.st.dim("last match:"), L(d.LastLine))
		}
		if d.Note != "" {
			out = append(out, L(d.Note))
		}
		if st.OutputFile != "" {
			out = append(out, m.st.dim("output file: "+L(st.OutputFile)))
		}
	case *task.DreamDetail:
		out = append(out, fmt.Sprintf("consolidating memory: %s · %s reviewed", L(cmp.Or(d.Phase, "starting")), plural(d.SessionsReviewing, "session")))
		for _, f := range d.FilesTouched {
			out = append(out, "  wrote "+L(f))
		}
		if tv.tail != "" {
			out = append(out, L(tv.tail))
		}
	default:
		if tv.tail != "" {
			out = append(out, L(tv.tail))
		}
	}
	for i, l := range out {
		out[i] = ansi.Truncate(l, m.width, "…")
	}
	// Scrolled with ↑/↓ and PgUp/PgDn; the head stays, the rest moves.
	if len(out) > h && h > 2 {
		m.taskScroll = min(m.taskScroll, len(out)-h+1)
		rest := out[2+m.taskScroll:]
		if len(rest) > h-2 {
			rest = append(rest[:h-3:h-3], m.st.dim(fmt.Sprintf("↓ %s below (↓, PgDn)", plural(len(out)-2-m.taskScroll-(h-3), "more line"))))
		}
		out = append(out[:2:2], rest...)
	}
	return out
}

func statusIcon(s task.Status) string {
	switch s {
	case task.Running, task.Pending:
		return "▶"
	case task.Completed:
		return "✓"
	}
	return "✗"
}

func fmtAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	if d < time.Hour {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// tokens shows a token count briefly: 950, 12.3k, 1.2M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// welcome is the empty conversation's screen.
func (m *model) welcome() []string {
	title := m.opts.Title
	if title == "" {
		title = "troupe"
	}
	what := "Ask for work: the lead plans it, does it and reports back."
	if m.opts.Teams {
		what = "Ask for work: the lead plans it, makes teammates and reports back."
	}
	return []string{
		m.st.accent(termtext.Line(title)),
		m.st.dim(what),
		m.st.dim("/help lists the keys and commands; Ctrl+C twice leaves."),
	}
}

// resumeScreen lists the recent sessions for /resume.
func (m *model) resumeScreen(h int) []string {
	out := []string{m.st.bold("Resume a session of this folder")}
	if len(m.sessions) == 0 {
		return append(out, m.st.dim("No earlier session was recorded here."))
	}
	first := max(0, m.selSess-(h-2))
	for i := first; i < len(m.sessions); i++ {
		si := m.sessions[i]
		line := fmt.Sprintf("%s  %s  %s", si.When.Format("Jan 02 15:04"), termtext.Line(si.ID), termtext.Line(firstLineOf(si.Prompt)))
		line = ansi.Truncate(line, m.width-2, "…")
		if i == m.selSess {
			line = m.st.sel(line)
		} else {
			line = "  " + line
		}
		out = append(out, line)
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
