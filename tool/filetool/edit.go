package filetool

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

//go:embed edit.md
var editDescription string

const editSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The path of the file to modify: absolute, or relative to the working directory"},
    "old_string": {"type": "string", "description": "The text to replace"},
    "new_string": {"type": "string", "description": "The text to replace it with (must be different from old_string)"},
    "replace_all": {"type": "boolean", "default": false, "description": "Replace all occurrences of old_string (default false)"}
  },
  "required": ["file_path", "old_string", "new_string"],
  "additionalProperties": false
}`

// maxEditFile bounds the size of a file Edit loads.
const maxEditFile = 64 << 20

// snippetContext is how many lines around an edit its result shows.
const snippetContext = 3

// Edit is the Edit tool: it replaces exact text in a file.
type Edit struct {
	cfg Config
	// hook, when non-nil, runs before the temp file is renamed into place
	// (a test's way to make a write fail).
	hook func() error
}

var _ tool.Tool = (*Edit)(nil)

// NewEdit returns the Edit tool.
func NewEdit(cfg Config) *Edit { return &Edit{cfg: cfg.withDefaults()} }

type editInput struct {
	FilePath   string  `json:"file_path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

// Spec implements tool.Tool.
func (*Edit) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Edit", Description: editDescription, InputSchema: json.RawMessage(editSchema)}
}

// ReadOnly implements tool.Tool: an Edit changes a file.
func (*Edit) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (e *Edit) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in editInput
	if res, ok := tool.Decode("Edit", call.Input, &in); !ok {
		return res, nil
	}
	switch {
	case in.FilePath == "":
		return tool.Errorf("Edit: file_path is required"), nil
	case in.OldString == nil:
		return tool.Errorf("Edit: old_string is required"), nil
	case in.NewString == nil:
		return tool.Errorf("Edit: new_string is required"), nil
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	old, repl := *in.OldString, *in.NewString
	if old == repl {
		return tool.Errorf("Edit: old_string and new_string are identical; there is nothing to change"), nil
	}
	abs := e.cfg.abs(in.FilePath)
	if res, ok := e.cfg.guard(ctx, "Edit", abs); !ok {
		return res, nil
	}
	st, err := os.Stat(abs)
	switch {
	case os.IsNotExist(err) && old == "":
		return e.create(abs, repl), nil
	case err != nil:
		return statErr("Edit", abs, err), nil
	case st.IsDir():
		return tool.Errorf("Edit: %s is a directory; give the path of a file", abs), nil
	case !st.Mode().IsRegular():
		return tool.Errorf("Edit: %s is not a regular file (%s)", abs, st.Mode().Type()), nil
	case st.Size() > maxEditFile:
		return tool.Errorf("Edit: %s is too large to edit (%s; the limit is %s)", abs, size(st.Size()), size(maxEditFile)), nil
	}
	data, res, ok := readConfined(e.cfg, "Edit", abs)
	if !ok {
		return res, nil
	}
	if looksBinary(data[:min(len(data), sniffLen)], false) {
		return tool.Errorf("Edit: %s looks like a binary file (it has NUL bytes); Edit changes text files only", abs), nil
	}
	if old == "" {
		if len(data) != 0 {
			return tool.Errorf("Edit: old_string is empty but %s already exists and is not empty; give the text to replace, or use Write to replace the whole file", abs), nil
		}
		return e.commit(abs, []byte(repl), nil, []byte(repl), 1, 0)
	}
	// The file is worked on as read: a 50 MB file is in memory once, and
	// the edited file is written from its parts.
	oldB := []byte(old)
	n := bytes.Count(data, oldB)
	if n == 0 && bytes.Contains(data, []byte("\r\n")) && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
		// The model saw the file's lines without their "\r".
		old = strings.ReplaceAll(old, "\n", "\r\n")
		repl = strings.ReplaceAll(strings.ReplaceAll(repl, "\r\n", "\n"), "\n", "\r\n")
		oldB = []byte(old)
		n = bytes.Count(data, oldB)
	}
	switch {
	case n == 0:
		return tool.Errorf("Edit: old_string not found in %s. It must match the file exactly, including whitespace and indentation and without Read's line-number prefixes; Read the file again to copy the current text", abs), nil
	case n > 1 && !in.ReplaceAll:
		return tool.Errorf("Edit: old_string matches %d times in %s (at lines %s); add surrounding lines to old_string to make it unique, or set replace_all to true to replace every occurrence",
			n, abs, matchLines(data, oldB, 10)), nil
	}
	at := bytes.Index(data, oldB)
	replB := []byte(repl)
	var parts [][]byte
	for pos, i := 0, at; ; {
		parts = append(parts, data[pos:pos+i], replB)
		pos += i + len(oldB)
		if !in.ReplaceAll {
			parts = append(parts, data[pos:])
			break
		}
		if i = bytes.Index(data[pos:], oldB); i < 0 {
			parts = append(parts, data[pos:])
			break
		}
	}
	return e.commit(abs, nil, parts, replB, n, at)
}

// create makes a new file holding content, as an Edit with an empty
// old_string does.
func (e *Edit) create(abs, content string) tool.Result {
	if err := e.cfg.writeAtomic("Edit", abs, e.hook, []byte(content)); err != nil {
		var me *mkdirError
		if errors.Is(err, errConfined) || errors.As(err, &me) {
			return tool.Errorf("Edit: %v", err)
		}
		return tool.Errorf("Edit: cannot create %s: %v", abs, err)
	}
	return tool.Result{Content: fmt.Sprintf("Created %s with %s (%s).", abs,
		plural(len(content), "byte"), plural(countLines(content), "line"))}
}

// commit writes the new content over abs (whole, or as parts written one
// after the other) and reports n replacements, showing the lines around
// the first, whose new text repl starts at byte at.
func (e *Edit) commit(abs string, whole []byte, parts [][]byte, repl []byte, n, at int) (tool.Result, error) {
	if whole != nil {
		parts = [][]byte{whole}
	}
	if err := e.cfg.writeAtomic("Edit", abs, e.hook, parts...); err != nil {
		var me *mkdirError
		if errors.Is(err, errConfined) || errors.As(err, &me) {
			return tool.Errorf("Edit: %v (the file is unchanged)", err), nil
		}
		return tool.Errorf("Edit: cannot write %s: %v (the file is unchanged)", abs, err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Edited %s: replaced %s.", abs, plural(n, "occurrence"))
	if snip := snippet(parts, at, len(repl)); snip != "" {
		if n > 1 {
			b.WriteString(" The first one now reads:\n")
		} else {
			b.WriteString(" The lines around it now read:\n")
		}
		b.WriteString(strings.TrimSuffix(snip, "\n"))
	}
	return tool.Result{Content: b.String()}, nil
}

// matchLines returns the line numbers where old starts in content, comma
// separated, at most max of them.
func matchLines(content, old []byte, max int) string {
	var nums []string
	line, pos := 1, 0
	nl := []byte("\n")
	for len(nums) < max {
		i := bytes.Index(content[pos:], old)
		if i < 0 {
			break
		}
		line += bytes.Count(content[pos:pos+i], nl)
		nums = append(nums, fmt.Sprint(line))
		line += bytes.Count(old, nl)
		pos += i + len(old)
	}
	s := strings.Join(nums, ", ")
	if bytes.Count(content, old) > max {
		s += ", ..."
	}
	return s
}

// snippet returns the lines of the edited content (its parts, one after
// the other) from snippetContext before the span [at, at+n) to
// snippetContext after it, numbered like Read's output (at most 40
// lines). It looks only at the bytes around the span.
func snippet(parts [][]byte, at, n int) string {
	nl := []byte("\n")
	// The lines before the span: count them in the parts before at.
	firstLine, pos := 1, 0
	var near []byte // the content from a little before at to a little after at+n
	var nearStart int
	const window = 64 << 10
	for _, p := range parts {
		end := pos + len(p)
		if lo := max(at-window, 0); end > lo && pos < at+n+window {
			from, to := max(lo-pos, 0), min(at+n+window-pos, len(p))
			if near == nil {
				nearStart = pos + from
			}
			near = append(near, p[from:to]...)
		}
		if pos < at-window {
			firstLine += bytes.Count(p[:min(len(p), at-window-pos)], nl)
		}
		pos = end
	}
	if len(near) == 0 && pos == 0 {
		return ""
	}
	// Lines of near: the first may be cut (when nearStart is not a line
	// start); number them from there.
	rel := at - nearStart
	spanFirst := firstLine + bytes.Count(near[:rel], nl)
	lastLine := spanFirst + bytes.Count(near[rel:min(rel+n, len(near))], nl)
	from := max(spanFirst-snippetContext, 1)
	to := min(lastLine+snippetContext, from+39)
	var b strings.Builder
	no := firstLine
	lines := bytes.Split(bytes.TrimSuffix(near, nl), nl)
	for i, line := range lines {
		if i == 0 && nearStart > 0 && !lineStart(parts, nearStart) {
			no++
			continue // a cut line: its start is before the window
		}
		if no >= from && no <= to {
			l := strings.TrimSuffix(string(line), "\r")
			if len(l) > maxLineLen {
				l = cutUTF8(l, maxLineLen) + " ..."
			}
			fmt.Fprintf(&b, "%6d\t%s\n", no, l)
		}
		no++
		if no > to {
			break
		}
	}
	return b.String()
}

// lineStart reports whether byte off of the parts begins a line.
func lineStart(parts [][]byte, off int) bool {
	pos := 0
	for _, p := range parts {
		if off-1 >= pos && off-1 < pos+len(p) {
			return p[off-1-pos] == '\n'
		}
		pos += len(p)
	}
	return true
}
