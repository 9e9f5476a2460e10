package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/peer"
	"github.com/troupe-dev/troupe/schedule"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/transcript"
)

// screen is what fills the window above the prompt.
type screen int

const (
	screenMain          screen = iota // the conversation
	screenTeammate                    // one teammate's view
	screenTasks                       // the task list
	screenTask                        // one task's detail
	screenResume                      // /resume: the recent sessions
	screenBoard                       // the team's task board (board.go)
	screenBoardTask                   // one task of the board
	screenWorkflows                   // /workflows: the workflow runs (workflows.go)
	screenWorkflow                    // one run, live
	screenWorkflowAgent               // one agent of that run
)

// Grace is how long a finished task stays in the list (the seed's 30 s).
const Grace = 30 * time.Second

// model is the interactive lead's state. Update never does I/O.
type model struct {
	ctx  context.Context
	drv  Driver
	opts Options
	// printer prints the settled conversation to the terminal's
	// scrollback (inline.go); nil on the alternate screen.
	printer *printer
	st      styles
	now     time.Time

	width, height int
	screen        screen

	convo  convo // the lead's conversation
	input  textarea.Model
	hist   []string // submitted prompts, oldest first
	histAt int      // position while browsing history; len(hist) when not
	draft  string   // the unsent prompt while browsing history
	// mainDraft is the lead's prompt set aside while a teammate's view
	// has the text field.
	mainDraft string

	working   bool
	turnStart time.Time
	activity  string // the lead's current activity in words
	spin      int
	usage     llm.Usage // the lead's, summed: its tokens and, with Options.Cost, its price
	spent     Spent     // the session's, with Options.Spent (spent.go)
	mode      string

	tasks map[task.ID]*taskView // every task seen
	order []task.ID             // in the order they came

	mates      []string             // teammate names in joining order
	mateInfo   map[string]*mateView // by name
	selMate    int                  // selected teammate in the strip; -1 none
	viewMate   string               // the teammate whose view is open
	selTask    int                  // selected row of the task list
	viewTask   task.ID              // the task whose detail is open
	taskScroll int                  // its detail's first line shown
	confirmed  string               // "stop" while asking to confirm a stop
	mateEsc    time.Time            // the last Esc in the teammate view

	questions []session.Question   // permission questions, oldest first
	feedback  bool                 // typing the deny feedback of questions[0]
	qFor      string               // the question qScroll and qNote are about
	qScroll   scroll               // its dialog's scroll (dialog.go)
	qNote     string               // why its last answer key was refused
	qFiles    map[string]*fileText // by question: the file an edit or write changes, read from disk
	pick      *picker              // the open question set's state (askdialog.go)

	// pending are the prompts typed while the lead worked, not yet taken:
	// shown below the conversation until the lead takes them.
	pending []string

	lastCtrlC time.Time
	notice    string // a transient line above the prompt
	quitting  bool
	inputRow  int // the frame line where the prompt starts (for the cursor)

	board boardState // the task board (board.go)
	wf    wfState    // the /workflows screens (workflows.go)

	sessions []SessionInfo // /resume's list
	selSess  int
	resume   string // the session picked: Run's Outcome

	sched schedule.State // the schedule, for the footer's next wake (loop.go)
}

// taskView is what the model knows of one task.
type taskView struct {
	state task.State
	ended time.Time // when it reached a terminal state
	tail  string    // the latest output or progress line
}

// mateView is what the model knows of one teammate.
type mateView struct {
	name, color, model string
	state              string // working, idle, waiting, dead, shut down
	task               task.ID
	lines              []string // its timeline, newest last (capped)
	lastAt             time.Time
	// Its transcript (Options.Transcript), read while its view is open,
	// as a conversation (the newest maxSaidEntries).
	convo   convo
	off     int64 // where the next read goes on
	reading bool  // a read is under way
	readErr string
}

// maxSaidEntries bounds the transcript entries a teammate's view keeps.
const maxSaidEntries = 2000

// transcriptMsg is what a read of a teammate's transcript found.
type transcriptMsg struct {
	name  string
	lines []transcript.Line
	next  int64
	err   error
}

const maxMateLines = 200

func newModel(ctx context.Context, drv Driver, opts Options) *model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ta := textarea.New()
	ta.Placeholder = "Ask the lead (Enter sends, Ctrl+J new line, / for commands)"
	ta.ShowLineNumbers = false
	ta.Prompt = "> "
	ta.SetHeight(1)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "ctrl+j"))
	ta.MaxHeight = 0           // a large paste is taken whole; fitInput bounds what shows
	ta.SetVirtualCursor(false) // the terminal's own cursor: no blink timer, no redraws
	ta.SetStyles(inputStyles(opts.NoColor))
	ta.Focus()
	m := &model{ctx: ctx, drv: drv, opts: opts, st: newStyles(opts.NoColor), now: opts.Now(), width: 80, height: 24,
		input: ta, tasks: map[task.ID]*taskView{}, qFiles: map[string]*fileText{}, mateInfo: map[string]*mateView{}, selMate: -1, mode: opts.Mode}
	if m.mode == "" {
		m.mode = "default"
	}
	for _, st := range opts.Tasks {
		m.track(st)
	}
	if opts.NoAltScreen {
		m.printer = newPrinter()
	}
	m.replay(opts.History)
	if opts.Schedule != nil {
		m.sched = *opts.Schedule
	}
	m.resize(m.width, m.height)
	return m
}

func (m *model) Init() tea.Cmd {
	if m.opts.Prompt == "" {
		return nil
	}
	m.input.SetValue(m.opts.Prompt)
	return m.submit()
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := m.update(msg)
	if m.printer != nil {
		m.flush() // inline.go
	}
	return m, cmd
}

func (m *model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tickMsg:
		m.now = time.Time(msg)
		m.spin++
		m.evict()
		return m, tea.Batch(m.readMate(), m.readBoard(), m.readWfAgent())
	case transcriptMsg:
		m.said(msg)
		return m, nil
	case boardMsg:
		m.boardRead(msg)
		return m, nil
	case wfTranscriptMsg:
		m.wfSaid(msg) // workflows.go
		return m, nil
	case eventMsg:
		return m, m.event(msg.e)
	case fileMsg:
		if slices.ContainsFunc(m.questions, func(q session.Question) bool { return q.ID == msg.id }) {
			m.qFiles[msg.id] = &msg.file
		}
		return m, nil
	case noticeMsg:
		m.notice = string(msg)
		return m, nil
	case mateBackMsg:
		if m.screen == screenTeammate && m.viewMate == string(msg) && len(m.questions) == 0 {
			m.notice = ""
			m.closeMate()
		}
		return m, nil
	case noteMsg:
		m.convo.add(entry{kind: entryNotice, text: string(msg)})
		m.convo.follow()
		return m, nil
	case sessionsMsg:
		m.sessions, m.selSess, m.screen = msg, 0, screenResume
		return m, nil
	case resumeCheckedMsg:
		return m, m.resumeChecked(msg)
	case tea.MouseWheelMsg:
		if len(m.questions) > 0 { // the wheel scrolls the open dialog
			if msg.Button == tea.MouseWheelUp {
				m.qScroll.off = max(0, m.qScroll.off-3)
			} else if msg.Button == tea.MouseWheelDown {
				m.qScroll.off += 3
			}
			return m, nil
		}
		d := 3
		if msg.Button == tea.MouseWheelUp {
			d = -3
		}
		switch m.screen {
		case screenTask:
			m.taskScroll = max(0, m.taskScroll+d)
			return m, nil
		case screenBoardTask:
			m.board.scroll = max(0, m.board.scroll+d)
			return m, nil
		}
		c := &m.convo
		if m.screen == screenTeammate {
			if mv := m.mateInfo[m.viewMate]; mv != nil {
				c = &mv.convo
			}
		}
		switch msg.Button {
		case tea.MouseWheelUp:
			c.scroll(m.st, 3, m.now)
		case tea.MouseWheelDown:
			c.scroll(m.st, -3, m.now)
		}
		return m, nil
	case tea.PasteMsg:
		m.input.InsertString(msg.Content)
		m.fitInput()
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// noticeMsg is a line for the person (a command's result or failure).
type noticeMsg string

func (m *model) resize(w, h int) {
	m.width, m.height = max(w, 20), max(h, 8)
	m.input.SetWidth(m.width - 2)
	m.fitInput()
	m.convo.width = m.width
}

// fitInput grows the prompt with its lines, up to a third of the window.
func (m *model) fitInput() {
	m.input.SetHeight(min(max(1, m.input.LineCount()), max(1, m.height/3)))
}

// do returns a command that runs f against the session and shows its
// error, if any, as a notice.
func (m *model) do(f func(ctx context.Context) error) tea.Cmd {
	ctx := m.ctx
	return func() tea.Msg {
		if err := f(ctx); err != nil {
			return noticeMsg("⚠ " + err.Error())
		}
		return nil
	}
}

// key handles a key press on the current screen.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s == "ctrl+c" {
		return m.ctrlC()
	}
	if len(m.questions) > 0 {
		return m.questionKey(k)
	}
	switch m.screen {
	case screenTeammate:
		return m.mateKey(k)
	case screenTasks:
		return m.tasksKey(k)
	case screenTask:
		return m.taskKey(k)
	case screenResume:
		return m.resumeKey(k)
	case screenBoard, screenBoardTask:
		return m.boardKey(k)
	case screenWorkflows, screenWorkflow, screenWorkflowAgent:
		return m.workflowsKey(k)
	}
	return m.mainKey(k)
}

// ctrlC cancels first, clears second and quits third: a running turn of
// the lead is interrupted (as Esc does), else a typed prompt is cleared,
// else a second Ctrl+C within 2 s on the idle, empty prompt quits. In a
// teammate's view the lead's turn is left alone (Esc interrupts the
// teammate there).
func (m *model) ctrlC() tea.Cmd {
	if m.working && m.screen != screenTeammate {
		m.lastCtrlC = time.Time{}
		m.notice = "Interrupting the lead's turn (Ctrl+C twice on an idle, empty prompt leaves)"
		drv := m.drv
		return func() tea.Msg { drv.Interrupt(); return nil }
	}
	if m.input.Value() != "" {
		m.input.Reset()
		m.fitInput()
		m.lastCtrlC, m.notice = time.Time{}, ""
		return nil
	}
	if m.working { // a teammate's view: the lead is not idle, so no quitting
		m.notice = "The lead is working: Ctrl+C in the conversation interrupts it (Esc here interrupts " + m.viewMate + ")"
		return nil
	}
	if !m.lastCtrlC.IsZero() && m.now.Sub(m.lastCtrlC) < 2*time.Second {
		m.quitting = true
		return tea.Quit
	}
	m.lastCtrlC = m.now
	m.notice = "Press Ctrl+C again to exit"
	return nil
}

func (m *model) mainKey(k tea.KeyPressMsg) tea.Cmd {
	m.notice = ""
	if m.pageKey(&m.convo, k.String(), true) {
		return nil
	}
	switch k.String() {
	case "enter":
		if m.input.Value() == "" && m.selMate >= 0 && m.selMate < len(m.mates) {
			return m.openMate(m.mates[m.selMate])
		}
		return m.submit()
	case "esc":
		if m.selMate >= 0 {
			m.selMate = -1
			return nil
		}
		if m.working {
			drv := m.drv
			return func() tea.Msg { drv.Interrupt(); return nil }
		}
		return nil
	case "ctrl+o":
		m.convo.toggleLast()
		return nil
	case "ctrl+t":
		return m.openBoard()
	case "ctrl+b":
		if !m.working {
			m.notice = "Nothing to background: the lead is not working"
			return nil
		}
		return m.do(func(ctx context.Context) error { _, err := m.drv.Background(ctx); return err })
	case "shift+tab":
		next := nextMode(m.mode)
		return m.do(func(context.Context) error { return m.drv.SetMode(next) })
	case "shift+down":
		if len(m.mates) > 0 {
			m.selMate = min(m.selMate+1, len(m.mates)-1)
		}
		return nil
	case "shift+up":
		if m.selMate >= 0 {
			m.selMate--
		}
		return nil
	case "up":
		// History, from the first line of the prompt only: a multi-line
		// entry is edited with the arrows inside it.
		if m.input.Line() == 0 && m.input.LineInfo().RowOffset == 0 && m.histAt > 0 {
			if m.histAt == len(m.hist) {
				m.draft = m.input.Value() // kept: Down past the newest brings it back
			}
			m.histAt--
			m.input.SetValue(m.hist[m.histAt])
			m.fitInput()
			return nil
		}
	case "down":
		if m.input.Value() == "" && m.histAt >= len(m.hist) {
			m.screen, m.selTask = screenTasks, 0
			return nil
		}
		if m.input.Line() == m.input.LineCount()-1 && m.histAt < len(m.hist) {
			m.histAt++
			if m.histAt == len(m.hist) {
				m.input.SetValue(m.draft)
				m.draft = ""
			} else {
				m.input.SetValue(m.hist[m.histAt])
			}
			m.fitInput()
			return nil
		}
	case "tab":
		if c := m.complete(); c != "" {
			m.input.SetValue(c)
			m.input.CursorEnd()
			return nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.fitInput()
	return cmd
}

// say shows a prompt the person sent: in the conversation, or below it
// while the lead works (it waits there, never inside the answer).
func (m *model) say(text string) {
	if m.working {
		m.pending = append(m.pending, text)
		return
	}
	m.convo.add(entry{kind: entryUser, text: text})
	m.convo.follow()
}

// delivered moves the waiting prompts the lead has now taken into the
// conversation, after what it has said so far.
func (m *model) delivered(text string) {
	if text == "" {
		return
	}
	m.pending = slices.DeleteFunc(m.pending, func(p string) bool {
		if !strings.Contains(text, p) {
			return false
		}
		m.convo.add(entry{kind: entryUser, text: p})
		return true
	})
}

// submit sends the prompt (or runs a slash command).
func (m *model) submit() tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return nil
	}
	m.input.Reset()
	m.fitInput()
	if len(m.hist) == 0 || m.hist[len(m.hist)-1] != text {
		m.hist = append(m.hist, text)
	}
	m.histAt = len(m.hist)
	if strings.HasPrefix(text, "/") {
		return m.slash(text)
	}
	m.say(text)
	drv := m.drv
	ctx := m.ctx
	return func() tea.Msg { drv.Submit(ctx, text); return nil }
}

var modes = []string{"default", "acceptEdits", "plan"}

// nextMode is the mode Shift+Tab moves to.
func nextMode(cur string) string {
	i := slices.Index(modes, cur)
	return modes[(i+1)%len(modes)]
}

// questionKey answers the first permission question.
func (m *model) questionKey(k tea.KeyPressMsg) tea.Cmd {
	q := m.questions[0]
	if len(q.Questions) > 0 {
		if q.ID != m.qFor {
			m.bottom() // lay its dialog out first: the keys act on what shows
		}
		return m.askKey(q, k)
	}
	answer := func(v session.Verdict) tea.Cmd {
		m.feedback = false
		m.input.Reset()
		m.questions = m.questions[1:] // the answer event confirms it
		return m.do(func(context.Context) error { return m.drv.Answer(q.ID, v) })
	}
	if q.ID != m.qFor {
		m.bottom() // lay its dialog out first: the keys act on what shows
	}
	if m.dialogKey(k) {
		return nil
	}
	// An answer that allows waits until the whole call has been on
	// screen: the hidden tail of a long command is where a trick hides.
	seen := func() bool {
		if n := m.unseen(); n > 0 {
			m.qNote = fmt.Sprintf("Read it all first: %s below (↓/j, PgDn, End).", plural(n, "more line"))
			return false
		}
		return true
	}
	if m.feedback {
		switch k.String() {
		case "enter":
			return answer(session.Verdict{Message: strings.TrimSpace(m.input.Value())})
		case "esc":
			m.feedback = false
			m.input.Reset()
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(k)
		return cmd
	}
	if q.Plan != "" {
		switch k.String() {
		case "1", "y":
			if !seen() {
				return nil
			}
			return answer(session.Verdict{Allow: true})
		case "3":
			m.feedback = true
			m.input.Reset()
		case "esc", "n":
			return answer(session.Verdict{Message: "The person sent the plan back; revise it and ask again."})
		}
		return nil
	}
	switch k.String() {
	case "1", "y":
		if !seen() {
			return nil
		}
		return answer(session.Verdict{Allow: true})
	case "2":
		if q.Always == "" {
			m.qNote = "No rule names exactly this call: 1 allows it once."
			return nil
		}
		if !seen() {
			return nil
		}
		return answer(session.Verdict{Allow: true, Always: true, Rule: q.Always})
	case "3":
		m.feedback = true
		m.input.Reset()
		return nil
	case "esc", "n":
		return answer(session.Verdict{Message: "The person declined this call."})
	}
	return nil
}

// visibleTasks are the tasks the list shows: active ones, and ended ones
// within their grace.
func (m *model) visibleTasks() []*taskView {
	var out []*taskView
	for _, id := range m.order {
		tv := m.tasks[id]
		if tv.state.Status.Active() || m.now.Sub(tv.ended) < Grace {
			out = append(out, tv)
		}
	}
	return out
}

func (m *model) tasksKey(k tea.KeyPressMsg) tea.Cmd {
	list := m.visibleTasks()
	switch k.String() {
	case "esc", "left":
		m.screen = screenMain
	case "up":
		if m.selTask > 0 {
			m.selTask--
		} else {
			m.screen = screenMain
		}
	case "down":
		m.selTask = min(m.selTask+1, max(0, len(list)-1))
	case "enter":
		if m.selTask < len(list) {
			tv := list[m.selTask]
			if d, ok := tv.state.Detail.(*task.Teammate); ok {
				return m.openMate(d.AgentName)
			}
			if tv.state.Type == task.LocalWorkflow {
				m.openWorkflow(tv.state.ID) // its live view (workflows.go)
				return nil
			}
			m.viewTask, m.screen, m.taskScroll = tv.state.ID, screenTask, 0
		}
	case "x":
		if m.selTask < len(list) && list[m.selTask].state.Status.Active() {
			id := list[m.selTask].state.ID
			return m.do(func(ctx context.Context) error { _, err := m.drv.Stop(ctx, string(id)); return err })
		}
	case "f":
		if m.selTask < len(list) {
			id := list[m.selTask].state.ID
			m.screen = screenMain
			return m.do(func(ctx context.Context) error { return m.drv.Foreground(ctx, id) })
		}
	}
	return nil
}

func (m *model) taskKey(k tea.KeyPressMsg) tea.Cmd {
	page := max(1, m.convoHeight()-2)
	switch k.String() {
	case "up", "k":
		m.taskScroll = max(0, m.taskScroll-1)
	case "down", "j":
		m.taskScroll++
	case "pgup":
		m.taskScroll = max(0, m.taskScroll-page)
	case "pgdown", "space":
		m.taskScroll += page
	case "home":
		m.taskScroll = 0
	case "esc", "left":
		m.screen = screenTasks
	case "x":
		if tv := m.tasks[m.viewTask]; tv != nil && tv.state.Status.Active() {
			id := tv.state.ID
			return m.do(func(ctx context.Context) error { _, err := m.drv.Stop(ctx, string(id)); return err })
		}
	case "f":
		id := m.viewTask
		m.screen = screenMain
		return m.do(func(ctx context.Context) error { return m.drv.Foreground(ctx, id) })
	}
	return nil
}

// evict forgets ended tasks past their grace (the list hides them at
// once; the map keeps 500 at most).
func (m *model) evict() {
	if len(m.order) <= 500 {
		return
	}
	keep := m.order[:0]
	for _, id := range m.order {
		tv := m.tasks[id]
		if tv.state.Status.Active() || m.now.Sub(tv.ended) < Grace {
			keep = append(keep, id)
		} else {
			delete(m.tasks, id)
		}
	}
	m.order = keep
}

// track records a task's state.
func (m *model) track(st task.State) *taskView {
	tv := m.tasks[st.ID]
	if tv == nil {
		tv = &taskView{}
		m.tasks[st.ID] = tv
		m.order = append(m.order, st.ID)
	}
	tv.state = st
	if st.Status.Terminal() && tv.ended.IsZero() {
		tv.ended = m.now
		if !st.End.IsZero() {
			tv.ended = st.End
		}
	}
	if d, ok := st.Detail.(*task.Teammate); ok {
		mv := m.mate(d.AgentName)
		mv.task, mv.model = st.ID, d.Model
		if d.Color != "" {
			mv.color = d.Color
		}
		switch {
		case st.Status == task.Completed:
			mv.state = "shut down"
		case st.Status == task.Killed:
			mv.state = "stopped" // stopped on purpose, not a crash
		case st.Status.Terminal():
			mv.state = "dead"
		case mv.state == "stopping":
			// stays until it ends
		case d.AwaitingApproval:
			mv.state = "waiting"
		case d.Idle:
			mv.state = "idle"
		default:
			mv.state = "working"
		}
		if n := len(d.Recent); n > 0 {
			tv.tail = d.Recent[n-1]
		}
	}
	return tv
}

// event applies one session event; the command it returns reads what
// a new question's dialog shows from disk.
func (m *model) event(e session.Event) tea.Cmd {
	if !e.Time.IsZero() && e.Time.After(m.now) {
		m.now = e.Time
	}
	if m.opts.Spent != nil {
		m.spent = m.opts.Spent()
	}
	switch e.Kind {
	case session.KindTurnStarted:
		m.working, m.turnStart, m.activity = true, e.Time, "Thinking"
		m.delivered(e.Text)
	case session.KindTurnEnded:
		m.working, m.activity = false, ""
		if strings.HasPrefix(m.notice, "Interrupting the lead") {
			m.notice = "" // its outcome is in the conversation
		}
		m.convo.endStream()
		if e.Err != nil {
			m.convo.add(entry{kind: entryError, text: plainError(e.Err)})
		} else if e.Result != nil && e.Result.Interrupted {
			m.convo.add(entry{kind: entryNotice, text: "Interrupted. What should the lead do instead?"})
		}
	case session.KindBackgrounded:
		m.working, m.activity = false, ""
		m.convo.endStream()
		m.convo.add(entry{kind: entryNotice, text: "The turn went on in the background as task " + e.TaskID + " (/tasks to see it; f in the list brings it back)"})
	case session.KindForegrounded:
		m.convo.add(entry{kind: entryNotice, text: "Task " + e.TaskID + " is the lead's conversation again"})
	case session.KindCleared: // commands.go: /clear
		m.convo.clear()
		m.convo.add(entry{kind: entryNotice, text: "A fresh conversation: the lead remembers nothing before this line (teammates and background tasks go on)."})
	case session.KindModel: // commands.go: /model NAME
		m.convo.add(entry{kind: entryNotice, text: "Model: " + e.Text + " from the lead's next turn."})
	case session.KindMode:
		m.mode = e.Text
	case session.KindRules:
		m.convo.add(entry{kind: entryQuiet, text: "permissions: " + e.Text})
	case session.KindNotice:
		m.convo.add(entry{kind: entryNotice, text: e.Text})
	case session.KindPeerMessage:
		if p := e.Peer; p != nil { // another session's words: the person sees who sent them
			m.convo.add(entry{kind: entryNotice, text: "✉ from session " + p.Sender() + " [" + peer.Short(p.Session) + "]: " + p.Text})
		}
	case session.KindScheduled, session.KindSchedule:
		m.scheduleEvent(e) // loop.go
	case session.KindPermission:
		if e.Question != nil && !slices.ContainsFunc(m.questions, func(q session.Question) bool { return q.ID == e.Question.ID }) {
			m.questions = append(m.questions, *e.Question)
			if e.Question.Agent == "team-lead" || e.Question.Agent == "" {
				m.convo.asking(e.Question.Tool, e.Question.Input, m.now)
			}
			return m.readFile(*e.Question)
		}
	case session.KindPermissionAnswer:
		if e.Question != nil {
			m.questions = slices.DeleteFunc(m.questions, func(q session.Question) bool { return q.ID == e.Question.ID })
			delete(m.qFiles, e.Question.ID)
			m.convo.answered(e.Question.Tool, e.Question.Input, m.now)
			if m.pick != nil && m.pick.id == e.Question.ID { // withdrawn while open
				if m.pick.typing {
					m.input.Reset()
				}
				m.pick = nil
			}
			if e.Verdict != nil {
				m.convo.add(entry{kind: entryQuiet, text: answered(*e.Question, *e.Verdict)})
			}
		}
	case session.KindTaskStarted, session.KindTaskProgress, session.KindTaskEnded, session.KindTaskStalled, session.KindTaskMonitor:
		if e.Task != nil {
			tv := m.track(e.Task.State)
			if e.Kind == session.KindTaskMonitor {
				// A monitor woke the lead: a line in the conversation, and
				// its last matching line on its task.
				m.convo.add(entry{kind: entryQuiet, text: fmt.Sprintf("%s %s", e.Task.State.ID, e.Task.Summary)})
				if mon, ok := e.Task.State.Detail.(*task.Monitor); ok {
					tv.tail = mon.LastLine
				}
			}
			if len(e.Task.Output) > 0 {
				tv.tail = lastLine(string(e.Task.Output))
			}
			if e.Kind == session.KindTaskStalled {
				tv.tail = "stalled: waiting for input?"
			}
		}
	default:
		if e.Team != nil {
			m.team(*e.Team, e.Kind)
			return nil
		}
		if e.Agent != nil {
			if e.TaskID != "" {
				m.taskAgent(task.ID(e.TaskID), *e.Agent)
				return nil
			}
			m.agent(*e.Agent)
		}
	}
	return nil
}

// taskAgent notes what a backgrounded turn does, on its task.
func (m *model) taskAgent(id task.ID, e agent.Event) {
	tv := m.tasks[id]
	if tv == nil {
		return
	}
	if e.Type == agent.EventToolUse && e.Call != nil {
		tv.tail = toolTitle(m.opts.Dir, e.Call.Name, e.Call.Input)
	}
}

// agent applies the lead's own agent event.
func (m *model) agent(e agent.Event) {
	switch e.Type {
	case agent.EventDelta:
		if !e.Thinking {
			m.convo.stream(e.Text)
			m.activity = "Writing"
		} else {
			m.activity = "Thinking"
		}
	case agent.EventAssistant:
		text := ""
		if e.Message != nil {
			text = e.Message.Text()
		}
		m.convo.finish(text)
		if e.Usage != nil {
			m.usage = m.usage.Add(*e.Usage)
		}
	case agent.EventUser:
		if e.Message != nil {
			m.delivered(e.Message.Text())
		}
	case agent.EventToolUse:
		if e.Call != nil {
			if e.Call.Name == "SendMessage" {
				m.woken(decodeInput(e.Call.Input).str("to"))
			}
			sum := toolTitle(m.opts.Dir, e.Call.Name, e.Call.Input)
			m.activity = sum
			m.convo.add(entry{kind: entryTool, id: e.Call.ToolUseID, tool: e.Call.Name, text: sum, start: e.At, input: e.Call.Input})
		}
	case agent.EventToolResult:
		if e.ToolResult != nil {
			m.convo.toolDone(e.ToolResult.ToolUseID, e.ToolResult.IsError, e.ToolResult.Text, e.Elapsed)
			m.activity = "Thinking"
		}
	case agent.EventRetry:
		if e.Err != nil {
			m.convo.add(entry{kind: entryQuiet, text: "Retrying the model call: " + plainError(e.Err)})
		}
	case agent.EventCompact:
		if strings.HasPrefix(m.notice, "Compacting") {
			m.notice = "" // done: the line below says so
		}
		m.convo.add(entry{kind: entryQuiet, text: "The conversation was compacted to fit the model's context"})
	}
}

func answered(q session.Question, v session.Verdict) string {
	who := q.Agent
	if q.Plan != "" {
		if v.Allow {
			return who + "'s plan approved"
		}
		return who + "'s plan sent back: " + v.Message
	}
	if len(q.Questions) > 0 {
		if !v.Allow {
			return fmt.Sprintf("%s's questions not answered: %s", who, v.Message)
		}
		var parts []string
		for _, x := range q.Questions {
			if a, ok := v.Answers[x.Question]; ok {
				parts = append(parts, x.Header+": "+a)
			}
		}
		return fmt.Sprintf("%s's questions answered: %s", who, strings.Join(parts, " · "))
	}
	call := toolSummary(q.Tool, q.Input)
	switch {
	case v.Allow && v.Always:
		return fmt.Sprintf("%s: %s allowed always (%s)", who, call, v.Rule)
	case v.Allow:
		return fmt.Sprintf("%s: %s allowed once", who, call)
	case v.Message != "":
		return fmt.Sprintf("%s: %s denied: %s", who, call, v.Message)
	}
	return fmt.Sprintf("%s: %s denied", who, call)
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return firstLineOf(s)
}

// plainError says an error in plain words: the first line, without the
// package prefixes that mean nothing to a person.
func plainError(err error) string {
	s := err.Error()
	for _, p := range []string{"session: ", "agent: ", "llm: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return firstLineOf(s)
}

// sessionsMsg carries /resume's list into Update.
type sessionsMsg []SessionInfo

// resumeCheckedMsg carries CheckResume's answer about a session picked
// with /resume into Update.
type resumeCheckedMsg struct {
	id  string
	err error
}

func (m *model) resumeKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		m.screen = screenMain
	case "up":
		m.selSess = max(0, m.selSess-1)
	case "down":
		m.selSess = min(m.selSess+1, max(0, len(m.sessions)-1))
	case "enter":
		if m.selSess < len(m.sessions) {
			id, check := m.sessions[m.selSess].ID, m.opts.CheckResume
			if check == nil {
				return m.resumeChecked(resumeCheckedMsg{id: id})
			}
			return func() tea.Msg { return resumeCheckedMsg{id: id, err: check(id)} }
		}
	}
	return nil
}

// resumeChecked ends this session to open the one picked with /resume,
// or, when that one cannot be opened, says why and goes on with this one.
func (m *model) resumeChecked(msg resumeCheckedMsg) tea.Cmd {
	if msg.err != nil {
		m.screen = screenMain
		m.convo.add(entry{kind: entryError, text: fmt.Sprintf("/resume %s: %s; this session goes on", msg.id, plainError(msg.err))})
		m.convo.follow()
		return nil
	}
	m.resume, m.quitting = msg.id, true
	return tea.Quit
}

// replay shows a resumed conversation: prompts, answers and tool calls.
func (m *model) replay(history []llm.Message) {
	for _, msg := range history {
		switch msg.Role {
		case llm.RoleUser:
			for _, b := range msg.Content { // the outcomes of the calls before
				if b.Type == llm.BlockToolResult {
					m.convo.toolDone(b.ToolUseID, b.IsError, b.Text, 0)
				}
			}
			if t := strings.TrimSpace(msg.Text()); t != "" && !strings.HasPrefix(t, "<") {
				m.convo.add(entry{kind: entryUser, text: t})
			}
		case llm.RoleAssistant:
			if t := strings.TrimSpace(msg.Text()); t != "" {
				m.convo.add(entry{kind: entryAssistant, text: t})
			}
			for _, u := range msg.ToolUses() {
				m.convo.add(entry{kind: entryTool, id: u.ToolUseID, tool: u.Name, text: toolTitle(m.opts.Dir, u.Name, u.Input), input: u.Input, done: true})
			}
		}
	}
	if len(history) > 0 {
		m.convo.add(entry{kind: entryQuiet, text: "resumed: the conversation above goes on"})
	}
}
