package tui

import (
	"html"
	"regexp"
	"strings"
)

// teammateMsg is one <teammate-message> block of a teammate's input.
type teammateMsg struct{ from, color, text string }

// teammateBlock matches a block as swarm writes it (swarm/format.go):
// its text cannot hold a closing tag (inert.Tags writes its "<" as
// "&lt;"), so the first closing tag ends it.
var teammateBlock = regexp.MustCompile(`(?s)<teammate-message teammate_id="([^"]*)"([^>]*)>\n?(.*?)\n?</teammate-message>`)

var colorAttr = regexp.MustCompile(`color="([^"]*)"`)

// teammateMessages returns the blocks of s, or nil when s has none. Text
// between blocks (the lead's framing words) is left out.
func teammateMessages(s string) []teammateMsg {
	if !strings.Contains(s, "<teammate-message") {
		return nil
	}
	var out []teammateMsg
	for _, g := range teammateBlock.FindAllStringSubmatch(s, -1) {
		tm := teammateMsg{from: html.UnescapeString(g[1]), text: strings.ReplaceAll(g[3], "&lt;", "<")}
		if c := colorAttr.FindStringSubmatch(g[2]); c != nil {
			tm.color = c[1]
		}
		out = append(out, tm)
	}
	return out
}

// noteTags are the runtime's other blocks a teammate's input may hold:
// shown as quiet lines of their text, never as tags.
var noteTags = []*regexp.Regexp{
	regexp.MustCompile(`(?s)<system-reminder>\n?(.*?)\n?</system-reminder>`),
	regexp.MustCompile(`(?s)<task-notification>\n?(.*?)\n?</task-notification>`),
	regexp.MustCompile(`(?s)<teammate-idle-digest>\n?(.*?)\n?</teammate-idle-digest>`),
}

// runtimeNotes takes the runtime's note blocks out of s: the notes'
// texts, and s without them.
func runtimeNotes(s string) (notes []string, rest string) {
	for _, re := range noteTags {
		for _, g := range re.FindAllStringSubmatch(s, -1) {
			notes = append(notes, strings.ReplaceAll(strings.TrimSpace(g[1]), "&lt;", "<"))
		}
		s = re.ReplaceAllString(s, "")
	}
	return notes, strings.TrimSpace(s)
}
