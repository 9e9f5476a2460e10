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
