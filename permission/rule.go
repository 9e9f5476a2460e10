package permission

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Behavior is what a rule or a decision does with a tool call.
type Behavior string

// The behaviors, in increasing precedence.
const (
	Allow Behavior = "allow"
	Ask   Behavior = "ask"
	Deny  Behavior = "deny"
)

// Rule is one permission rule, as written in a settings file:
// Tool or Tool(specifier).
//
// Edit rules cover Write, Edit, MultiEdit and NotebookEdit; Read rules
// cover Read, Glob and Grep. An MCP rule mcp__server or mcp__server__*
// covers every tool of that server.
type Rule struct {
	Tool      string // tool name, such as Bash, Read or mcp__server__tool
	Specifier string // the text in parentheses; empty for a whole tool
	// Source is the file the rule was loaded from; empty for rules built
	// in code.
	Source string
	// Base is the directory that relative path specifiers (./x, x, /x)
	// resolve against; empty means the request's working directory.
	Base string
}

// ErrBadRule is wrapped by every rule parse error.
var ErrBadRule = errors.New("bad permission rule")

// ParseRule parses a rule such as "Bash(npm run test:*)",
// "Read(./src/**)", "WebFetch(domain:example.com)" or "mcp__server__*".
func ParseRule(s string) (Rule, error) {
	r, err := parseRule(s)
	if err != nil {
		return Rule{}, fmt.Errorf("%w %q: %s", ErrBadRule, s, err)
	}
	return r, nil
}

// MustParseRule is ParseRule for rules known to be valid; it panics on
// error. It is meant for tests and literals.
func MustParseRule(s string) Rule {
	r, err := ParseRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

func parseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, spec, hasSpec := s, "", false
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return Rule{}, errors.New("missing closing parenthesis")
		}
		name, spec, hasSpec = s[:i], s[i+1:len(s)-1], true
	} else if strings.ContainsRune(s, ')') {
		return Rule{}, errors.New("unbalanced parenthesis")
	}
	if err := checkToolName(name); err != nil {
		return Rule{}, err
	}
	if hasSpec && strings.TrimSpace(spec) == "" {
		return Rule{}, errors.New("empty specifier (write the tool name alone to cover every call)")
	}
	if spec == "*" || spec == "**" {
		spec = "" // Tool(*) is the whole tool
	}
	r := Rule{Tool: name, Specifier: spec}
	if spec == "" {
		return r, nil
	}
	switch {
	case name == "Bash":
		if _, _, err := bashPattern(spec); err != nil {
			return Rule{}, err
		}
	case isPathTool(name):
		if err := checkPathPattern(spec); err != nil {
			return Rule{}, err
		}
	case name == "WebFetch":
		d, ok := strings.CutPrefix(spec, "domain:")
		if !ok || d == "" || strings.ContainsAny(d, "/ ") {
			return Rule{}, errors.New(`WebFetch specifier must be "domain:HOST"`)
		}
	case strings.HasPrefix(name, "mcp__"):
		return Rule{}, errors.New("MCP rules take no specifier")
	}
	return r, nil
}

func checkToolName(name string) error {
	if name == "" {
		return errors.New("empty tool name")
	}
	for i, c := range name {
		ok := c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if c == '*' && strings.HasPrefix(name, "mcp__") && i == len(name)-1 && strings.HasSuffix(name, "__*") {
			ok = true
		}
		if !ok {
			return fmt.Errorf("invalid character %q in tool name", c)
		}
	}
	return nil
}

// String returns the rule in settings syntax.
func (r Rule) String() string {
	if r.Specifier == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Specifier + ")"
}

// editTools and readTools are the tools Edit and Read rules cover.
var (
	editTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}
	readTools = []string{"Read", "Glob", "Grep", "NotebookRead", "LS"}
	// freeTools change nothing and reach nothing outside the
	// conversation, so they need no approval in any mode (deny rules
	// still hold): ToolSearch only loads deferred tools' definitions.
	freeTools = []string{"ToolSearch"}
)

func isPathTool(name string) bool {
	return contains(editTools, name) || contains(readTools, name)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// covers reports whether rule r names tool (before its specifier is
// looked at).
func (r Rule) covers(tool string) bool {
	switch {
	case r.Tool == tool:
		return true
	case r.Tool == "Edit":
		return contains(editTools, tool)
	case r.Tool == "Read":
		return contains(readTools, tool)
	case strings.HasPrefix(r.Tool, "mcp__"):
		server := strings.TrimSuffix(strings.TrimSuffix(r.Tool, "*"), "__")
		if strings.Count(server, "__") == 1 { // mcp__server: the whole server
			return strings.HasPrefix(tool, server+"__")
		}
	}
	return false
}

// bashPattern parses a Bash specifier into the words it matches and
// whether it is a prefix (":*" or a final " *").
func bashPattern(spec string) (words []string, prefix bool, err error) {
	s := strings.TrimSpace(spec)
	if t, ok := strings.CutSuffix(s, ":*"); ok {
		s, prefix = t, true
	}
	words, star, err := splitWords(s)
	if err != nil {
		return nil, false, err
	}
	if n := len(words); n > 0 && star[n-1] && words[n-1] == "*" && !prefix {
		words, prefix = words[:n-1], true
	}
	for i, w := range words {
		if star[i] {
			return nil, false, fmt.Errorf("wildcard in %q: only a final :* (word prefix) is supported", w)
		}
	}
	if len(words) == 0 {
		return nil, false, errors.New("no command words")
	}
	return words, prefix, nil
}

// splitWords splits a rule's command on unquoted blanks, removing single
// and double quotes and backslashes the way a shell would. star[i] reports
// an unquoted '*' in word i.
func splitWords(s string) (words []string, star []bool, err error) {
	var (
		cur     strings.Builder
		inWord  bool
		hasStar bool
		quote   rune
		escape  bool
	)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			star = append(star, hasStar)
		}
		cur.Reset()
		inWord, hasStar = false, false
	}
	for _, c := range s {
		switch {
		case escape:
			cur.WriteRune(c)
			escape = false
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				escape = true
			} else {
				cur.WriteRune(c)
			}
		case c == '\\':
			escape, inWord = true, true
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		default:
			if c == '*' {
				hasStar = true
			}
			if strings.ContainsRune(";&|<>()`$", c) {
				return nil, nil, fmt.Errorf("shell operator %q in a Bash rule: write one rule per command", c)
			}
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 || escape {
		return nil, nil, errors.New("unterminated quote or escape")
	}
	flush()
	return words, star, nil
}

// checkPathPattern validates a path specifier.
func checkPathPattern(spec string) error {
	if strings.HasPrefix(spec, "~") && !strings.HasPrefix(spec, "~/") && spec != "~" {
		return errors.New("only ~/ is expanded, not ~user")
	}
	for _, seg := range strings.Split(spec, "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("bad glob %q: %v", seg, err)
		}
	}
	return nil
}

// SplitRules splits a list of rules as people write them (a
// --allowedTools value, a skill's allowed-tools): commas and blanks
// separate, except inside parentheses, so "Bash(npm test), Edit
// Read(./src/**)" is three rules. A parenthesis never closed keeps the
// rest in its rule. Every other byte is kept as written.
func SplitRules(s string) []string {
	var out []string
	depth, start := 0, -1
	for i := range len(s) { // the separators are ASCII: bytes will do
		switch c := s[i]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ','):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}
