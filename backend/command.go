// This file holds the pane command line that tmux and iTerm2 teammates
// share: pure string building, no processes.

package backend

import (
	"errors"
	"fmt"
	"maps"
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

// EnvFile returns the text of a pane's environment file: one line
//
//	export K='v'
//
// per variable, keys sorted, every value single-quoted (ShellQuote); an
// empty value is written as an empty quoted word, so that it masks a value
// the pane would otherwise inherit. The pane's shell reads it with "."
// (PaneCommand): the values (API keys, tokens, OTLP headers) then reach
// the teammate's environment without ever being on a command line, where
// any local user could read them in /proc/<pid>/cmdline, or in a shell's
// history for a line typed into an iTerm2 session. It refuses a bad
// variable name and any control character.
func EnvFile(env map[string]string) ([]byte, error) {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !validEnvName(k) {
			return nil, fmt.Errorf("environment variable name %q: want letters, digits and _, not starting with a digit", k)
		}
		q, err := ShellQuote(env[k])
		if err != nil {
			return nil, fmt.Errorf("environment variable %s: %w", k, err)
		}
		b.WriteString("export " + k + "=" + q + "\n")
	}
	return []byte(b.String()), nil
}

// PaneCommand builds the shell command line a pane runs:
//
//	. '<envFile>' && rm -f '<envFile>' && cd '<cwd>' && exec '<argv0>' '<arg>' ...
//
// envFile is a file written from EnvFile (by the backend, owner-only): the
// shell reads the teammate's variables from it and removes it before the
// teammate starts, so that no value is on any process's command line.
// Every word is single-quoted (ShellQuote). exec makes the teammate the
// pane's own process: the pane's pid is the teammate's, its exit status is
// the pane's, and its exit ends the pane (or the shell of an iTerm2
// session). With an empty envFile there is no file to read, and with an
// empty cwd there is no cd. It refuses a relative cwd or envFile, an
// empty argv, an argv[0] that exec could read as an option, and any
// control character.
func PaneCommand(cwd, envFile string, argv []string) (string, error) {
	var b strings.Builder
	if envFile != "" {
		if !filepath.IsAbs(envFile) {
			return "", fmt.Errorf("environment file %q is not absolute", envFile)
		}
		q, err := ShellQuote(envFile)
		if err != nil {
			return "", fmt.Errorf("environment file: %w", err)
		}
		b.WriteString(". " + q + " && rm -f " + q + " && ")
	}
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
	b.WriteString("exec")
	if len(argv) == 0 || argv[0] == "" {
		return "", errors.New("no command: argv is empty")
	}
	if strings.HasPrefix(argv[0], "-") {
		return "", fmt.Errorf("command %q starts with '-': exec would read it as an option", argv[0])
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
