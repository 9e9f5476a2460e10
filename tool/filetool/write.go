package filetool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

//go:embed write.md
var writeDescription string

const writeSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The path of the file to write: absolute, or relative to the working directory"},
    "content": {"type": "string", "description": "The content to write to the file"}
  },
  "required": ["file_path", "content"],
  "additionalProperties": false
}`

// Write is the Write tool: it creates or replaces a whole file.
type Write struct {
	cfg Config
	// hook, when non-nil, runs before the temp file is renamed into place
	// (a test's way to make a write fail).
	hook func() error
}

var _ tool.Tool = (*Write)(nil)

// NewWrite returns the Write tool.
func NewWrite(cfg Config) *Write { return &Write{cfg: cfg.withDefaults()} }

type writeInput struct {
	FilePath string  `json:"file_path"`
	Content  *string `json:"content"`
}

// Spec implements tool.Tool.
func (*Write) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Write", Description: writeDescription, InputSchema: json.RawMessage(writeSchema)}
}

// ReadOnly implements tool.Tool: a Write changes a file.
func (*Write) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (w *Write) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in writeInput
	if res, ok := tool.Decode("Write", call.Input, &in); !ok {
		return res, nil
	}
	switch {
	case in.FilePath == "":
		return tool.Errorf("Write: file_path is required"), nil
	case in.Content == nil:
		return tool.Errorf("Write: content is required (use \"\" for an empty file)"), nil
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	abs := w.cfg.abs(in.FilePath)
	if res, ok := w.cfg.guard(ctx, "Write", abs); !ok {
		return res, nil
	}
	st, err := os.Stat(abs)
	existed := err == nil
	switch {
	case existed && st.IsDir():
		return tool.Errorf("Write: %s is a directory; give the path of a file", abs), nil
	case existed && !st.Mode().IsRegular():
		return tool.Errorf("Write: %s is not a regular file (%s)", abs, st.Mode().Type()), nil
	}
	if err := w.cfg.writeAtomic("Write", abs, w.hook, []byte(*in.Content)); err != nil {
		var me *mkdirError
		if errors.Is(err, errConfined) || errors.As(err, &me) {
			return tool.Errorf("Write: %v (the file is unchanged)", err), nil
		}
		return tool.Errorf("Write: cannot write %s: %v (the file is unchanged)", abs, err), nil
	}
	verb := "Created"
	if existed {
		verb = "Overwrote"
	}
	return tool.Result{Content: fmt.Sprintf("%s %s: wrote %s (%s).", verb, abs,
		plural(len(*in.Content), "byte"), plural(countLines(*in.Content), "line"))}, nil
}
