// This file holds the pane command line that tmux and iTerm2 teammates
// share: pure string building, no processes.

package backend

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckText refuses text that a pane command or a terminal argument must
// not carry: invalid UTF-8 and control characters (newline, escape, NUL,
// C1 ...), which a terminal or multiplexer would act on instead of passing
// along. The error names what ("shell word", "name") and the character.
func CheckText(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q has control character %U at byte %d", what, s, r, i)
		}
	}
	return nil
}

// ShellQuote returns s as one single-quoted POSIX shell word: the shell
// gives back s exactly, with no expansion. It refuses control characters
// and invalid UTF-8 (CheckText).
func ShellQuote(s string) (string, error) {
	if err := CheckText("shell word", s); err != nil {
		return "", err
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}

// validEnvName reports whether k is a portable environment variable name.
func validEnvName(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// PaneCommand builds the shell command line a pane runs:
//
//	cd '<cwd>' && exec env K='v' ... '<argv0>' '<arg>' ...
//
// Every word is single-quoted (ShellQuote); an empty value is written as an
// empty quoted word, so that it masks a value the pane would otherwise
// inherit. Keys are sorted, so the line is deterministic. exec makes the
// teammate the pane's own process: the pane's pid is the teammate's, its
// exit status is the pane's, and its exit ends the pane (or the shell of
// an iTerm2 session).
// With an empty cwd there is no cd. It refuses a relative cwd, an empty
// argv, an argv[0] that env would read as an option or an assignment, a bad
// variable name, and any control character.
func PaneCommand(cwd string, env map[string]string, argv []string) (string, error) {
	var b strings.Builder
	if cwd != "" {
		if !filepath.IsAbs(cwd) {
			return "", fmt.Errorf("working folder %q is not absolute", cwd)
		}
		q, err := ShellQuote(cwd)
		if err != nil {
			return "", fmt.Errorf("working folder: %w", err)
		}
		b.WriteString("cd " + q + " && ")
	}
	b.WriteString("exec env")
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !validEnvName(k) {
			return "", fmt.Errorf("environment variable name %q: want letters, digits and _, not starting with a digit", k)
		}
		q, err := ShellQuote(env[k])
		if err != nil {
			return "", fmt.Errorf("environment variable %s: %w", k, err)
		}
		b.WriteString(" " + k + "=" + q)
	}
	if len(argv) == 0 || argv[0] == "" {
		return "", errors.New("no command: argv is empty")
	}
	if strings.HasPrefix(argv[0], "-") {
		return "", fmt.Errorf("command %q starts with '-': env would read it as an option", argv[0])
	}
	if strings.Contains(argv[0], "=") {
		return "", fmt.Errorf("command %q contains '=': env would read it as a variable", argv[0])
	}
	for i, a := range argv {
		q, err := ShellQuote(a)
		if err != nil {
			return "", fmt.Errorf("argument %d: %w", i, err)
		}
		b.WriteString(" " + q)
	}
	return b.String(), nil
}
