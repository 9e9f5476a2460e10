package tui

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/troupe-dev/troupe/permission"
)

// builtins are the slash commands the interactive lead knows itself.
var builtins = map[string]string{
	"help":        "the keys and commands",
	"team":        "the teammates and what they do",
	"agents":      "the teammates (as /team)",
	"tasks":       "every background task",
	"board":       "the team's shared task list (Ctrl+T)",
	"workflows":   "the workflow runs, live: phases and agents",
	"permissions": "the permission mode and rules; add or remove a rule",
	"model":       "the model in use; /model NAME switches the lead to NAME from its next turn",
	"clear":       "start a fresh conversation: the lead forgets this one (teammates and tasks go on)",
	"compact":     "replace the lead's conversation by a summary now (it also does so by itself when its context fills)",
	"resume":      "pick an earlier session of this folder to continue",
	"exit":        "leave (the team is shut down first)",
	"expand":      "show or fold the last tool call's result",
	"loop":        "[interval] PROMPT: repeat a prompt (10m, 2h; none: the lead paces it); /loop stop ends it",
	"cron":        "the scheduled jobs and the pending wakeup (as /loop list)",
	"hide":        "hide a teammate's tmux pane (it goes on working): /hide NAME",
	"show":        "bring a hidden teammate's pane back: /show NAME",
}

// Hider is implemented by a Driver whose teammates may run in tmux panes
// that can be hidden and shown (session.Session).
type Hider interface {
	HideTeammate(ctx context.Context, name string, hide bool) error
}

// commandNames returns every command name, sorted.
func (m *model) commandNames() []string {
	var out []string
	for n := range builtins {
		out = append(out, n)
	}
	for n := range m.opts.Commands {
		if _, ok := builtins[n]; !ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// completions returns the commands that complete the prompt's "/word".
func (m *model) completions() []string {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return nil
	}
	var out []string
	for _, n := range m.commandNames() {
		if strings.HasPrefix(n, v[1:]) {
			out = append(out, n)
		}
	}
	return out
}

// complete returns the prompt completed to the longest common prefix of
// its completions ("" when there is nothing to add).
func (m *model) complete() string {
	c := m.completions()
	if len(c) == 0 {
		return ""
	}
	p := c[0]
	for _, n := range c[1:] {
		for !strings.HasPrefix(n, p) {
			p = p[:len(p)-1]
		}
	}
	if len(c) == 1 {
		p += " "
	}
	if "/"+p == m.input.Value() {
		return ""
	}
	return "/" + p
}

// slash runs a slash command typed at the prompt.
func (m *model) slash(text string) tea.Cmd {
	name, args, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	args = strings.TrimSpace(args)
	switch name {
	case "exit", "quit":
		m.quitting = true
		return tea.Quit
	case "help":
		m.convo.add(entry{kind: entryNotice, text: m.help()})
	case "team", "agents":
		m.convo.add(entry{kind: entryNotice, text: m.roster()})
	case "tasks":
		m.screen, m.selTask = screenTasks, 0
	case "workflows":
		m.openWorkflows() // workflows.go
	case "board":
		return m.openBoard()
	case "clear": // the screen clears when the session says it did (KindCleared)
		drv := m.drv
		return m.do(func(context.Context) error { return drv.Clear() })
	case "model":
		return m.switchModel(args)
	case "expand":
		m.convo.toggleLast()
	case "hide", "show":
		return m.hide(name, args)
	case "compact":
		m.notice = "Compacting the conversation…"
		return m.do(func(ctx context.Context) error { return m.drv.Compact(ctx) })
	case "permissions":
		return m.permissions(args)
	case "loop":
		return m.loop(args) // loop.go
	case "cron":
		return m.loop("list")
	case "resume":
		if m.opts.Sessions == nil {
			m.convo.add(entry{kind: entryNotice, text: "To resume an earlier session: troupe --continue (the latest here) or troupe --resume ID."})
			break
		}
		list := m.opts.Sessions
		return func() tea.Msg { return sessionsMsg(list()) }
	default:
		if _, ok := m.opts.Commands[name]; ok || m.opts.Slash != nil {
			return m.custom(name, args, text)
		}
		m.convo.add(entry{kind: entryError, text: fmt.Sprintf("/%s: no such command (/help lists them)", name)})
	}
	m.convo.follow()
	return nil
}

// switchModel runs /model: alone it names the model in use; with a name
// it switches the lead to it from its next turn (a KindModel event says
// so).
func (m *model) switchModel(name string) tea.Cmd {
	switch {
	case name == "":
		cur := cmp.Or(m.drv.Model(), m.opts.Model, "the provider's default")
		m.convo.add(entry{kind: entryNotice, text: "Model: " + cur + " (/model NAME switches it from the next turn)"})
		m.convo.follow()
		return nil
	case strings.ContainsAny(name, " \t\n"):
		m.convo.add(entry{kind: entryError, text: fmt.Sprintf("/model %s: a model name is one word, for example /model claude-sonnet-4-5", name)})
		m.convo.follow()
		return nil
	}
	drv := m.drv
	return m.do(func(context.Context) error { return drv.SetModel(name) })
}

// hide runs /hide NAME or /show NAME.
func (m *model) hide(verb, name string) tea.Cmd {
	h, ok := m.drv.(Hider)
	switch {
	case name == "" || strings.ContainsAny(name, " \t"):
		m.convo.add(entry{kind: entryError, text: fmt.Sprintf("/%s NAME: name one teammate (/team lists them)", verb)})
		return nil
	case !ok:
		m.convo.add(entry{kind: entryError, text: "/" + verb + ": not available here"})
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		if err := h.HideTeammate(ctx, name, verb == "hide"); err != nil {
			return noticeMsg("⚠ /" + verb + " " + name + ": " + err.Error())
		}
		if verb == "hide" {
			return noticeMsg(name + "'s pane is hidden; it goes on working (/show " + name + " brings it back)")
		}
		return noticeMsg(name + "'s pane is back in the window")
	}
}

// custom runs a command the model does not know through Options.Slash:
// a prompt to send, or a note to show.
func (m *model) custom(name, args, text string) tea.Cmd {
	slashFn, drv, ctx := m.opts.Slash, m.drv, m.ctx
	if slashFn == nil {
		m.convo.add(entry{kind: entryError, text: "/" + name + ": not available here"})
		return nil
	}
	m.convo.add(entry{kind: entryUser, text: text})
	return func() tea.Msg {
		prompt, note, err := slashFn(ctx, name, args)
		if err != nil {
			return noticeMsg("⚠ /" + name + ": " + err.Error())
		}
		if prompt != "" {
			drv.Submit(ctx, prompt)
		}
		if note == "" {
			return nil
		}
		return noteMsg(note) // a listing or an answer: in the conversation
	}
}

func (m *model) help() string {
	var b strings.Builder
	b.WriteString("Keys: Enter sends · Ctrl+J new line · Up/Down history (the unsent draft is kept) · Esc interrupts the lead · Ctrl+C interrupts, then clears, then twice on an empty prompt exits · Ctrl+B moves the turn to the background · Ctrl+O shows or folds the last tool call · Shift+Tab cycles the permission mode · PgUp/PgDn scroll, Ctrl+Home/End (g/G on an empty prompt while scrolled back) go to the start or follow the end · Ctrl+T the task board · Shift+Down/Up pick a teammate, Enter opens it (there: type to it, Esc interrupts it, ← back, /stop or Ctrl+X twice stops it) · Down on an empty prompt opens the tasks.\nCommands:")
	names := m.commandNames()
	for _, n := range names {
		d := builtins[n]
		if d == "" {
			d = m.opts.Commands[n]
		}
		fmt.Fprintf(&b, "\n  /%s  %s", n, d)
	}
	return b.String()
}

func (m *model) roster() string {
	if len(m.mates) == 0 {
		if !m.opts.Teams {
			return "No teammates: agent teams are off (start troupe with --agent-teams to have them)."
		}
		return "No teammates yet: ask the lead to create a team."
	}
	var b strings.Builder
	b.WriteString("Teammates:")
	for _, n := range m.mates {
		mv := m.mateInfo[n]
		cur := ""
		if tv := m.tasks[mv.task]; tv != nil && tv.tail != "" {
			cur = " · " + tv.tail
		}
		model := ""
		if mv.model != "" {
			model = " (" + mv.model + ")"
		}
		// Plain: a notice is drawn through the terminal-text sanitizer,
		// which would show a color's escape as text.
		state := m.mateState(mv)
		fmt.Fprintf(&b, "\n  %s %s%s: %s%s", newStyles(true).dot(state), n, model, state, cur)
	}
	return b.String()
}

// permissions is /permissions: with no arguments, the mode and the rules
// in force; "allow|ask|deny RULE" adds one; "remove [allow|ask|deny]
// RULE" takes one out; a mode name sets the mode.
func (m *model) permissions(args string) tea.Cmd {
	drv := m.drv
	word, rest, _ := strings.Cut(args, " ")
	rest = strings.TrimSpace(rest)
	switch word {
	case "":
		mode := m.mode
		return func() tea.Msg {
			allow, ask, deny := drv.Rules()
			var b strings.Builder
			fmt.Fprintf(&b, "Permission mode: %s (Shift+Tab cycles default, acceptEdits, plan).", mode)
			for _, l := range []struct {
				name  string
				rules []permission.Rule
			}{{"deny", deny}, {"ask", ask}, {"allow", allow}} {
				for _, r := range l.rules {
					src := r.Source
					if src == "" {
						src = "built in"
					}
					fmt.Fprintf(&b, "\n  %-5s  %s  (%s)", l.name, r, src)
				}
			}
			b.WriteString("\n/permissions allow|ask|deny RULE adds a rule (kept in .troupe/settings.local.json); /permissions remove [allow|ask|deny] RULE takes one out.")
			return noteMsg(b.String())
		}
	case "allow", "ask", "deny":
		if rest == "" {
			m.convo.add(entry{kind: entryError, text: "/permissions " + word + ": which rule? For example /permissions " + word + " Bash(npm test)"})
			return nil
		}
		b := permission.Behavior(word)
		return m.do(func(context.Context) error { return drv.AddRule(b, rest) })
	case "remove":
		b := permission.Allow
		if w, r, ok := strings.Cut(rest, " "); ok && (w == "allow" || w == "ask" || w == "deny") {
			b, rest = permission.Behavior(w), strings.TrimSpace(r)
		}
		if rest == "" {
			m.convo.add(entry{kind: entryError, text: "/permissions remove: which rule? For example /permissions remove allow Bash(npm test)"})
			return nil
		}
		return func() tea.Msg {
			note, err := drv.RemoveRule(b, rest)
			if err != nil {
				return noticeMsg("⚠ " + err.Error())
			}
			if note != "" {
				return noteMsg(rest + ": " + note)
			}
			return nil
		}
	}
	mode := word
	return m.do(func(context.Context) error { return drv.SetMode(mode) })
}

// noteMsg is a longer text for the conversation (a listing).
type noteMsg string
