package tui

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/session"
)

// The permission dialog says in words what the session tools and
// NotebookEdit would do, and their calls have one-line summaries.
func TestDialogSessionTools(t *testing.T) {
	for _, tt := range []struct {
		tool, input string
		want        []string
	}{
		{"EnterPlanMode", `{}`, []string{"switch the session to plan mode"}},
		{"EnterWorktree", `{"name":"spike"}`, []string{"new git worktree on worktree/spike"}},
		{"ExitWorktree", `{"action":"remove","discard_changes":true}`, []string{"remove it with its branch", "DISCARDING"}},
		{"NotebookEdit", `{"notebook_path":"a.ipynb","cell_id":"c1","new_source":"import x","edit_mode":"insert","cell_type":"code"}`,
			[]string{"a.ipynb: insert cell c1 (code)", "+ import x"}},
	} {
		m, _ := newTest(t)
		conversation(m)
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		q := session.Question{ID: "q", Agent: "team-lead", Tool: tt.tool, Input: json.RawMessage(tt.input), Reason: "needs approval"}
		ev(m, session.Event{Kind: session.KindPermission, Question: &q, Queued: 1})
		frame := ansi.Strip(m.frame())
		for _, w := range tt.want {
			if !strings.Contains(frame, w) {
				t.Errorf("%s dialog lacks %q:\n%s", tt.tool, w, frame)
			}
		}
	}
	for _, tt := range [][3]string{
		{"NotebookEdit", `{"notebook_path":"nb/a.ipynb","new_source":"x"}`, "NotebookEdit(nb/a.ipynb)"},
		{"ToolSearch", `{"query":"select:mcp__gh__create_issue"}`, "ToolSearch(select:mcp__gh__create_issue)"},
		{"ExitWorktree", `{"action":"keep"}`, "ExitWorktree(keep)"},
	} {
		if got := toolSummary(tt[0], json.RawMessage(tt[1])); got != tt[2] {
			t.Errorf("toolSummary(%s) = %q; want %q", tt[1], got, tt[2])
		}
	}
}
