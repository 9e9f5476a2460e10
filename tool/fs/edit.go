package fs

import (
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
	content := string(data)
	if looksBinary(data[:min(len(data), sniffLen)], false) {
		return tool.Errorf("Edit: %s looks like a binary file (it has NUL bytes); Edit changes text files only", abs), nil
	}
	if old == "" {
		if content != "" {
			return tool.Errorf("Edit: old_string is empty but %s already exists and is not empty; give the text to replace, or use Write to replace the whole file", abs), nil
		}
		return e.commit(abs, repl, repl, 1, 0)
	}
	n := strings.Count(content, old)
	if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
		// The model saw the file's lines without their "\r".
		old = strings.ReplaceAll(old, "\n", "\r\n")
		repl = strings.ReplaceAll(strings.ReplaceAll(repl, "\r\n", "\n"), "\n", "\r\n")
		n = strings.Count(content, old)
	}
	switch {
	case n == 0:
		return tool.Errorf("Edit: old_string not found in %s. It must match the file exactly, including whitespace and indentation and without Read's line-number prefixes; Read the file again to copy the current text", abs), nil
	case n > 1 && !in.ReplaceAll:
		return tool.Errorf("Edit: old_string matches %d times in %s (at lines %s); add surrounding lines to old_string to make it unique, or set replace_all to true to replace every occurrence",
			n, abs, matchLines(content, old, 10)), nil
	}
	at := strings.Index(content, old)
	var updated string
	if in.ReplaceAll {
		updated = strings.ReplaceAll(content, old, repl)
	} else {
		updated = content[:at] + repl + content[at+len(old):]
	}
	return e.commit(abs, updated, repl, n, at)
}

// create makes a new file holding content, as an Edit with an empty
// old_string does.
func (e *Edit) create(abs, content string) tool.Result {
	if err := e.cfg.writeAtomic("Edit", abs, []byte(content), e.hook); err != nil {
		var me *mkdirError
		if errors.Is(err, errConfined) || errors.As(err, &me) {
			return tool.Errorf("Edit: %v", err)
		}
		return tool.Errorf("Edit: cannot create %s: %v", abs, err)
	}
	return tool.Result{Content: fmt.Sprintf("Created %s with %s (%s).", abs,
		plural(len(content), "byte"), plural(countLines(content), "line"))}
}

// commit writes updated over abs and reports n replacements, showing the
// lines around the first, whose new text repl starts at byte at.
func (e *Edit) commit(abs, updated, repl string, n, at int) (tool.Result, error) {
	if err := e.cfg.writeAtomic("Edit", abs, []byte(updated), e.hook); err != nil {
		var me *mkdirError
		if errors.Is(err, errConfined) || errors.As(err, &me) {
			return tool.Errorf("Edit: %v (the file is unchanged)", err), nil
		}
		return tool.Errorf("Edit: cannot write %s: %v (the file is unchanged)", abs, err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Edited %s: replaced %s.", abs, plural(n, "occurrence"))
	if snip := snippet(updated, at, len(repl)); snip != "" {
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
func matchLines(content, old string, max int) string {
	var nums []string
	line, pos := 1, 0
	for len(nums) < max {
		i := strings.Index(content[pos:], old)
		if i < 0 {
			break
		}
		line += strings.Count(content[pos:pos+i], "\n")
		nums = append(nums, fmt.Sprint(line))
		line += strings.Count(old, "\n")
		pos += i + len(old)
	}
	s := strings.Join(nums, ", ")
	if strings.Count(content, old) > max {
		s += ", ..."
	}
	return s
}

// snippet returns the lines of content from snippetContext before the
// span [at, at+n) to snippetContext after it, numbered like Read's output
// (at most 40 lines).
func snippet(content string, at, n int) string {
	if content == "" {
		return ""
	}
	firstLine := strings.Count(content[:at], "\n") + 1
	lastLine := firstLine + strings.Count(content[at:at+n], "\n")
	from := max(firstLine-snippetContext, 1)
	to := min(lastLine+snippetContext, from+39)
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		no := i + 1
		if no < from {
			continue
		}
		if no > to {
			break
		}
		line = strings.TrimSuffix(line, "\r")
		if len(line) > maxLineLen {
			line = cutUTF8(line, maxLineLen) + " ..."
		}
		fmt.Fprintf(&b, "%6d\t%s\n", no, line)
	}
	return b.String()
}
