package transcript

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/llm"
)

// Render writes t for a person: a heading, then one line per event
// (messages, tool calls with their input, results with how long they
// took, retries, compactions, the end of each run), each cut to one
// line. clean makes stored text safe for a terminal.
func Render(w io.Writer, t Transcript, clean func(string) string) error {
	h := t.Header
	parent := ""
	if h.Parent != "" {
		parent = ", a sidechain of " + clean(h.Parent)
	}
	if _, err := fmt.Fprintf(w, "== %s (%s%s), session %s, started %s\n", clean(h.Agent), clean(h.Kind), parent, clean(h.Session), clock(h.Time)); err != nil {
		return err
	}
	return RenderLines(w, t.Lines, clean)
}

// RenderLines writes lines as Render does, without the heading (for a
// follower printing what was appended).
func RenderLines(w io.Writer, lines []Line, clean func(string) string) error {
	for _, l := range lines {
		var text string
		switch l.Type {
		case "user":
			// A message of tool results only says nothing here: its
			// tool_result lines follow.
			if l.Message != nil && strings.TrimSpace(l.Message.Text()) != "" {
				text = "user: " + blocks(l.Message, 300)
			}
		case "assistant":
			if l.Message != nil {
				text = "assistant: " + blocks(l.Message, 300)
				if l.Usage != nil {
					text += fmt.Sprintf("  [%d in, %d out]", l.Usage.TotalInput(), l.Usage.OutputTokens)
				}
			}
		case "tool_use":
			if l.Call != nil {
				text = "  → " + l.Call.Name + " " + oneLine(string(l.Call.Input), 200)
			}
		case "tool_result":
			if l.ToolResult != nil {
				mark := "←"
				if l.ToolResult.IsError {
					mark = "✗"
				}
				text = fmt.Sprintf("  %s %s (%d ms)", mark, oneLine(l.ToolResult.Text, 200), l.ElapsedMS)
				for _, im := range l.ToolResult.Images {
					text += " " + im.String()
				}
			}
		case "retry":
			text = "retry: " + oneLine(l.Error, 200)
		case "compact":
			text = "compacted: " + oneLine(l.Text, 200)
		case "result":
			text = "run ended"
			if l.Result != nil && l.Result.Text != "" {
				text += ": " + oneLine(l.Result.Text, 200)
			}
			if l.Error != "" {
				text += " (error: " + oneLine(l.Error, 200) + ")"
			}
		}
		if text == "" {
			continue
		}
		// A message of several text blocks shows each on its own line,
		// after a blank line, under the first.
		var out strings.Builder
		for i, part := range strings.Split(text, blockBreak) {
			if i > 0 {
				out.WriteString("\n\n" + strings.Repeat(" ", len("15:04:05 ")))
			}
			out.WriteString(clean(part))
		}
		if _, err := fmt.Fprintf(w, "%s %s\n", clock(l.Time), out.String()); err != nil {
			return err
		}
	}
	return nil
}

// blockBreak separates a message's text blocks in a rendered line until
// the line is written (blocks takes it out of the text).
const blockBreak = "\u2029" // PARAGRAPH SEPARATOR

// blocks returns the text blocks of m, each cut to one line of n bytes,
// separated by blockBreak: a prompt and the note queued after it ("say
// hi", "QUEUED-NOTE") are two blocks, not "say hiQUEUED-NOTE".
func blocks(m *llm.Message, n int) string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == llm.BlockText && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, oneLine(strings.ReplaceAll(b.Text, blockBreak, " "), n))
		}
	}
	return strings.Join(parts, blockBreak)
}

func clock(rfc string) string {
	t, err := time.Parse(time.RFC3339Nano, rfc)
	if err != nil {
		return "--:--:--"
	}
	return t.Local().Format("15:04:05")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// ValidSession reports whether id can name a session folder: not empty,
// no path separator, not . or ..
func ValidSession(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\`) && id != "." && id != ".."
}

// RenderAgent returns the transcript of agent in session under home,
// rendered as Render does (clean cleans each text); false when there is
// none, or session is not a valid session id. A transcript whose later
// lines are malformed renders the lines before them.
func RenderAgent(home, session, agent string, clean func(string) string) (string, bool) {
	if !ValidSession(session) {
		return "", false
	}
	t, err := Read(filepath.Join(Dir(home, session), FileName(agent)))
	if err != nil && len(t.Lines) == 0 {
		return "", false
	}
	var b bytes.Buffer
	if err := Render(&b, t, clean); err != nil {
		return "", false
	}
	return b.String(), true
}
