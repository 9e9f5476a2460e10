// Package frontmatter splits a Markdown file into its YAML front matter
// and body, and reads the subset of YAML that Claude Code's skill, command
// and agent files use: one "key: value" a line, values plain or quoted,
// and lists written inline ([a, b] or a, b) or as "- item" lines below
// their key. Anything else in the front matter is an error naming its
// line, so that a file is never half understood.
package frontmatter

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Doc is a parsed file.
type Doc struct {
	Fields map[string]Value
	Body   string
	// BodyLine is the 1-based line the body starts on.
	BodyLine int
}

// Value is one field: Text for a scalar, List for a list.
type Value struct {
	Text   string
	List   []string
	IsList bool
	Line   int
}

// Error is a malformed front matter, with the line at fault.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse splits src. A file without front matter (not starting with a
// "---" line) is all body.
func Parse(src string) (Doc, error) {
	if !utf8.ValidString(src) {
		return Doc{}, &Error{Line: 1, Msg: "not UTF-8 text"}
	}
	src = strings.TrimPrefix(src, "\ufeff")
	lines := strings.Split(src, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], "\r ") != "---" {
		return Doc{Fields: map[string]Value{}, Body: src, BodyLine: 1}, nil
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimRight(lines[i], "\r "); t == "---" || t == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return Doc{}, &Error{Line: 1, Msg: "the front matter has no closing --- line"}
	}
	d := Doc{Fields: map[string]Value{}, Body: strings.Join(lines[end+1:], "\n"), BodyLine: end + 2}
	var listKey string
	for i := 1; i < end; i++ {
		n := i + 1
		raw := strings.TrimRight(lines[i], "\r")
		t := strings.TrimSpace(raw)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if item, ok := strings.CutPrefix(t, "- "); ok || t == "-" {
			if listKey == "" {
				return Doc{}, &Error{Line: n, Msg: "a list item outside a list"}
			}
			v := d.Fields[listKey]
			s, err := scalar(strings.TrimSpace(item))
			if err != nil {
				return Doc{}, &Error{Line: n, Msg: err.Error()}
			}
			v.List, v.IsList = append(v.List, s), true
			d.Fields[listKey] = v
			continue
		}
		if raw != strings.TrimLeft(raw, " \t") {
			return Doc{}, &Error{Line: n, Msg: "nested values are not supported"}
		}
		key, val, ok := strings.Cut(t, ":")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			return Doc{}, &Error{Line: n, Msg: fmt.Sprintf("want key: value, got %q", t)}
		}
		if _, dup := d.Fields[key]; dup {
			return Doc{}, &Error{Line: n, Msg: fmt.Sprintf("%s is given twice", key)}
		}
		val = strings.TrimSpace(val)
		listKey = ""
		switch {
		case val == "":
			listKey = key // "- item" lines may follow
			d.Fields[key] = Value{Line: n}
		case strings.HasPrefix(val, "["):
			if !strings.HasSuffix(val, "]") {
				return Doc{}, &Error{Line: n, Msg: fmt.Sprintf("%s: the list has no closing ]", key)}
			}
			items, err := splitList(val[1 : len(val)-1])
			if err != nil {
				return Doc{}, &Error{Line: n, Msg: fmt.Sprintf("%s: %v", key, err)}
			}
			d.Fields[key] = Value{List: items, IsList: true, Line: n}
		default:
			s, err := scalar(val)
			if err != nil {
				return Doc{}, &Error{Line: n, Msg: fmt.Sprintf("%s: %v", key, err)}
			}
			d.Fields[key] = Value{Text: s, Line: n}
		}
	}
	return d, nil
}

// scalar unquotes a plain, 'single' or "double" quoted value and drops a
// trailing comment from a plain one.
func scalar(v string) (string, error) {
	switch {
	case strings.HasPrefix(v, `"`):
		s, err := strconv.Unquote(v)
		if err != nil {
			return "", fmt.Errorf("bad double-quoted value %s", v)
		}
		return s, nil
	case strings.HasPrefix(v, "'"):
		if len(v) < 2 || !strings.HasSuffix(v, "'") {
			return "", fmt.Errorf("bad single-quoted value %s", v)
		}
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'"), nil
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v, nil
}

// splitList splits the inside of [a, "b, c", d].
func splitList(s string) ([]string, error) {
	var out []string
	for _, part := range splitOutsideQuotes(s) {
		p := strings.TrimSpace(part)
		if p == "" {
			continue
		}
		v, err := scalar(p)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func splitOutsideQuotes(s string) []string {
	var parts []string
	var quote rune
	start := 0
	for i, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		case quote == 0 && r == ',':
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// Strings returns a field as a list: a list as is, a scalar split at
// commas (Claude Code accepts "Read, Grep"), nil when absent.
func (d Doc) Strings(key string) []string {
	v, ok := d.Fields[key]
	if !ok {
		return nil
	}
	if v.IsList {
		return v.List
	}
	var out []string
	for _, p := range strings.Split(v.Text, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Text returns a scalar field, "" when absent.
func (d Doc) Text(key string) string { return d.Fields[key].Text }
