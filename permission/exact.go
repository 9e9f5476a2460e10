package permission

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"
)

// ExactRule returns the allow rule that covers exactly the call of tool
// with input, in settings syntax, for "allow always"; "" when no rule can
// name it exactly, so that "always" is not offered.
//
// Nothing the model wrote becomes a wildcard: a Bash command gives a rule
// of its literal words, each quoted when it holds a blank, a quote, a
// backslash, a '*' or a shell operator, so `python3 '*'` gives
// Bash(python3 '*'), which does not match python3 evil.py. A command with
// a glob, an expansion, an assignment or more than one simple command
// has no exact rule. A file tool gives its absolute path with glob
// characters bracketed (Edit(//w/a[*].go)); Glob, Grep and LS their
// folder as a Read rule; WebFetch its host. Other tools take no
// specifier: the rule is the tool.
//
// sh parses the command (package permission/shell's Parse); with nil,
// only a command of plain words (letters, digits and _./,:=+@%^-
// separated by single blanks) has a rule. ExactRule does no I/O.
func ExactRule(tool string, input json.RawMessage, sh func(string) (Script, error)) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	switch {
	case tool == "Bash":
		words := exactWords(str("command"), sh)
		if words == nil {
			return ""
		}
		return BashRule(words)
	case contains(editTools, tool), contains(readTools, tool):
		p := str("file_path")
		if p == "" {
			p = str("notebook_path")
		}
		if p == "" && (tool == "Glob" || tool == "Grep" || tool == "LS") {
			p = str("path")
		}
		name := "Read"
		if contains(editTools, tool) {
			name = "Edit"
		}
		if g, ok := literalGlob(p); ok {
			return name + "(/" + g + ")"
		}
		return ""
	case tool == "WebFetch":
		u, err := url.Parse(str("url"))
		if err != nil || u.Hostname() == "" || strings.ContainsAny(u.Hostname(), "/ ") {
			return ""
		}
		return "WebFetch(domain:" + strings.ToLower(u.Hostname()) + ")"
	}
	if checkToolName(tool) != nil || strings.HasSuffix(tool, "*") {
		return ""
	}
	return tool
}

// exactWords returns the literal words of command when it is one simple
// command with no glob, expansion or assignment; nil otherwise.
func exactWords(command string, sh func(string) (Script, error)) []string {
	if strings.TrimSpace(command) == "" || !utf8.ValidString(command) {
		return nil // settings files are JSON: UTF-8 only
	}
	if sh == nil {
		for _, c := range command {
			if c != ' ' && !plainRune(c) {
				return nil
			}
		}
		words := strings.Split(strings.TrimSpace(command), " ")
		for _, w := range words {
			if w == "" {
				return nil // two blanks: keep the rule plain
			}
		}
		return words
	}
	s, err := sh(command)
	if err != nil || len(s.Risks) > 0 || len(s.Functions) > 0 || len(s.Commands) != 1 {
		return nil
	}
	c := s.Commands[0]
	if len(c.Assigns) > 0 || len(c.Args) == 0 {
		return nil
	}
	words, lit := c.words()
	if !lit {
		return nil
	}
	return words
}

func plainRune(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_./,:=+@%^-", c)
}

// BashRule returns the Bash rule that matches exactly these literal
// words: each word that a rule would read otherwise (a blank, a quote, a
// backslash, a '*', a shell operator, a final ":*") is single-quoted, so
// no word of the command becomes a wildcard.
func BashRule(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = RuleWord(w)
	}
	return "Bash(" + strings.Join(q, " ") + ")"
}

// RuleWord quotes one word for a Bash rule when it holds anything but
// plain characters: the rule then reads it back as that literal word.
func RuleWord(w string) string {
	if w != "" && !strings.ContainsFunc(w, func(c rune) bool { return !plainRune(c) }) {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// literalGlob returns the absolute slash path p as a path-rule pattern
// that matches only p: its glob characters (*, ?, [) are bracketed. It
// reports false for a path that is not absolute or holds a backslash
// (a rule reads it as a separator).
func literalGlob(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || strings.ContainsAny(p, "\x00\n") {
		return "", false
	}
	return strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]").Replace(p), true
}
