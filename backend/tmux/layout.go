package tmux

import (
	"fmt"
	"strings"
)

// colours maps the team palette (team colour names) to tmux colours.
var colours = map[string]string{
	"red":    "red",
	"blue":   "blue",
	"green":  "green",
	"yellow": "yellow",
	"purple": "magenta",
	"orange": "colour208",
	"pink":   "colour205",
	"cyan":   "cyan",
}

// tmuxColour returns the tmux colour of a palette colour name, "" for no
// colour, or an error naming the unknown colour.
func tmuxColour(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	c, ok := colours[name]
	if !ok {
		return "", fmt.Errorf("colour %q: want one of red, blue, green, yellow, purple, orange, pink, cyan", name)
	}
	return c, nil
}

// placeholder is what a new pane runs until respawn-pane starts the
// teammate in it. It has two words so that tmux runs it directly, not
// through the user's default-shell.
var placeholder = []string{"cat", "-"}

// paneIDFormat makes split-window and new-session print the new pane's id.
const paneIDFormat = "#{pane_id}"

// splitArgs returns the split-window command that makes a pane for one
// more teammate. inside is true when troupe splits the leader's window
// (leader is its pane); target is what to split when the dedicated
// session exists but troupe owns no pane in it. teammates are troupe's
// live panes, oldest first.
//
// Inside tmux the first teammate takes 70% of the leader's pane,
// horizontally. After that the middle teammate pane (floor((n-1)/2)) is
// split, vertically when there is an odd number of them and horizontally
// when even; relayout then evens them out.
func splitArgs(inside bool, leader, target string, teammates []string) []string {
	tail := append([]string{"-P", "-F", paneIDFormat, "--"}, placeholder...)
	n := len(teammates)
	switch {
	case n == 0 && inside:
		return append([]string{"split-window", "-d", "-t", leader, "-h", "-l", "70%"}, tail...)
	case n == 0:
		return append([]string{"split-window", "-d", "-t", target}, tail...)
	}
	dir := "-h"
	if n%2 == 1 {
		dir = "-v"
	}
	return append([]string{"split-window", "-d", "-t", teammates[(n-1)/2], dir}, tail...)
}

// relayoutArgs returns the commands (joined by ";") that re-tile window
// after a split. Inside tmux, with more than two panes (the leader and
// teammates), the leader keeps the left 30% and teammates stack on the
// right (main-vertical); the dedicated session is tiled. Both show pane
// titles on the top border.
func relayoutArgs(inside bool, window, leader string, panes int) [][]string {
	cmds := [][]string{{"set-option", "-w", "-t", window, "pane-border-status", "top"}}
	switch {
	case inside && panes > 2:
		cmds = append(cmds,
			[]string{"select-layout", "-t", window, "main-vertical"},
			[]string{"resize-pane", "-t", leader, "-x", "30%"})
	case !inside && panes > 1:
		cmds = append(cmds, []string{"select-layout", "-t", window, "tiled"})
	}
	return cmds
}

// styleArgs returns the commands that title and colour pane p. tmux
// expands formats in a title (#{...}, and #(...) runs a command), so every
// '#' of title is doubled to keep it literal.
func styleArgs(p, title, colour string) [][]string {
	cmds := [][]string{{"select-pane", "-t", p, "-T", tmuxArg(strings.ReplaceAll(title, "#", "##"))}}
	if colour == "" {
		return cmds
	}
	return append(cmds,
		[]string{"set-option", "-p", "-t", p, "pane-border-format", "#[fg=" + colour + ",bold] #{pane_title} #[default]"},
		[]string{"set-option", "-p", "-t", p, "pane-border-style", "fg=" + colour},
		[]string{"set-option", "-p", "-t", p, "pane-active-border-style", "fg=" + colour},
		[]string{"set-option", "-p", "-t", p, "window-style", "bg=default,fg=" + colour})
}

// launchArgs returns the commands that start command in pane p (kept
// after it exits, so its exit status can be read) and print the pid of
// its process. The command line is given to /bin/sh: tmux would run a
// single-argument command with the user's default-shell, and a fish or
// csh reads quotes differently.
func launchArgs(p, command string) [][]string {
	return [][]string{
		{"set-option", "-p", "-t", p, "remain-on-exit", "on"},
		{"respawn-pane", "-k", "-t", p, "--", "/bin/sh", "-c", command},
		{"display-message", "-p", "-t", p, "#{pane_pid}"},
	}
}

// chain joins tmux commands into one command line: "a ; b ; c".
func chain(cmds ...[]string) []string {
	var args []string
	for i, c := range cmds {
		if i > 0 {
			args = append(args, ";")
		}
		args = append(args, c...)
	}
	return args
}

// leaderSocket returns the socket path of the tmux server the leader runs
// in: the first comma field of $TMUX ("/tmp/tmux-1000/default,1234,0").
func leaderSocket(tmuxEnv string) (string, error) {
	sock, _, _ := strings.Cut(tmuxEnv, ",")
	if sock == "" || !strings.HasPrefix(sock, "/") {
		return "", fmt.Errorf("$TMUX %q: want <socket path>,<pid>,<session>", tmuxEnv)
	}
	return sock, nil
}

// validPaneID reports whether p looks like a tmux pane id ("%12").
func validPaneID(p string) bool {
	if len(p) < 2 || p[0] != '%' {
		return false
	}
	for _, r := range p[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// tmuxArg escapes s for a tmux command line given as separate arguments:
// tmux reads an argument that ends in ';' as the end of a command, unless
// the ';' is written '\;'.
func tmuxArg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}
