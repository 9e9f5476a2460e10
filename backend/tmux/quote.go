package tmux

import "strings"

// tmuxArg escapes s for a tmux command line given as separate arguments:
// tmux reads an argument that ends in ';' as the end of a command, unless
// the ';' is written '\;'.
func tmuxArg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}
