package filetool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

const notebookEditDescription = `Replace, insert or delete one cell of a Jupyter notebook (.ipynb) by its id, keeping the notebook valid nbformat 4 JSON and the other cells (their outputs and metadata) as they are.

- Read the notebook first: Read shows each cell with its id (<cell id="...">). A cell without an id in the file is addressed as "cell-N", N counted from 0.
- edit_mode "replace" (the default) sets the source of cell_id; a code cell's old outputs and execution count are cleared, since they were of the old source. Give cell_type to change the cell's type.
- edit_mode "insert" adds a new cell after cell_id (at the top when cell_id is omitted); cell_type is required. In an nbformat 4.5 notebook the new cell gets an id, given in the result.
- edit_mode "delete" removes cell_id; new_source is ignored.`

const notebookEditSchema = `{
  "type": "object",
  "properties": {
    "notebook_path": {"type": "string", "description": "The path of the .ipynb file: absolute, or relative to the working directory"},
    "cell_id": {"type": "string", "description": "The id of the cell to replace or delete, or to insert after (omit to insert at the top)"},
    "new_source": {"type": "string", "description": "The new source of the cell"},
    "cell_type": {"type": "string", "enum": ["code", "markdown"], "description": "The cell's type: required for insert; for replace, changes the type"},
    "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"], "description": "replace (default), insert or delete"}
  },
  "required": ["notebook_path", "new_source"],
  "additionalProperties": false
}`

// maxNotebookPictures is how many output pictures a Read of a notebook
// shows.
const maxNotebookPictures = 4

// maxNotebook bounds the size of a notebook NotebookEdit loads.
const maxNotebook = 64 << 20

// NotebookEditor is the NotebookEdit tool.
type NotebookEditor struct {
	cfg  Config
	hook func() error // as Edit's
}

var _ tool.Tool = (*NotebookEditor)(nil)

// NewNotebookEdit returns the NotebookEdit tool.
func NewNotebookEdit(cfg Config) *NotebookEditor { return &NotebookEditor{cfg: cfg.withDefaults()} }

// Spec implements tool.Tool.
func (*NotebookEditor) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "NotebookEdit", Description: notebookEditDescription, InputSchema: json.RawMessage(notebookEditSchema)}
}

// ReadOnly implements tool.Tool: it changes a file.
func (*NotebookEditor) ReadOnly(json.RawMessage) bool { return false }

type notebookEditInput struct {
	NotebookPath string  `json:"notebook_path"`
	CellID       string  `json:"cell_id"`
	NewSource    *string `json:"new_source"`
	CellType     string  `json:"cell_type"`
	EditMode     string  `json:"edit_mode"`
}

// Run implements tool.Tool.
func (e *NotebookEditor) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	const name = "NotebookEdit"
	var in notebookEditInput
	if res, ok := tool.Decode(name, call.Input, &in); !ok {
		return res, nil
	}
	if in.EditMode == "" {
		in.EditMode = ModeReplace
	}
	switch {
	case in.NotebookPath == "":
		return tool.Errorf("%s: notebook_path is required", name), nil
	case !strings.EqualFold(filepath.Ext(in.NotebookPath), ".ipynb"):
		return tool.Errorf("%s: %s is not a .ipynb file; use Edit for other files", name, in.NotebookPath), nil
	case in.EditMode != ModeReplace && in.EditMode != ModeInsert && in.EditMode != ModeDelete:
		return tool.Errorf("%s: edit_mode %q: want replace, insert or delete", name, in.EditMode), nil
	case in.NewSource == nil && in.EditMode != ModeDelete:
		return tool.Errorf("%s: new_source is required to %s a cell", name, in.EditMode), nil
	case in.CellType != "" && in.CellType != "code" && in.CellType != "markdown":
		return tool.Errorf("%s: cell_type %q: want code or markdown", name, in.CellType), nil
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	abs := e.cfg.abs(in.NotebookPath)
	if res, ok := e.cfg.guard(ctx, name, abs); !ok {
		return res, nil
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return statErr(name, abs, err), nil
	case !st.Mode().IsRegular():
		return tool.Errorf("%s: %s is not a regular file", name, abs), nil
	case st.Size() > maxNotebook:
		return tool.Errorf("%s: %s is too large to edit (%s; the limit is %s)", name, abs, size(st.Size()), size(maxNotebook)), nil
	}
	data, res, ok := readConfined(e.cfg, name, abs)
	if !ok {
		return res, nil
	}
	nb, err := ParseNotebook(data)
	if err != nil {
		return tool.Errorf("%s: %s: %v", name, abs, err), nil
	}
	src := ""
	if in.NewSource != nil {
		src = *in.NewSource
	}
	id, err := nb.Apply(NotebookChange{CellID: in.CellID, Source: src, Type: in.CellType, Mode: in.EditMode})
	if err != nil {
		return tool.Errorf("%s: %s: %v (the notebook is unchanged)", name, abs, err), nil
	}
	out, err := nb.Marshal()
	if err != nil {
		return tool.Errorf("%s: %s: %v (the notebook is unchanged)", name, abs, err), nil
	}
	if err := e.cfg.writeAtomic(name, abs, e.hook, out); err != nil {
		var me *mkdirError
		if errors.Is(err, errConfined) || errors.As(err, &me) {
			return tool.Errorf("%s: %v (the notebook is unchanged)", name, err), nil
		}
		return tool.Errorf("%s: cannot write %s: %v (the notebook is unchanged)", name, abs, err), nil
	}
	switch in.EditMode {
	case ModeInsert:
		return tool.Result{Content: fmt.Sprintf("Inserted a %s cell with id %s into %s.", in.CellType, id, abs)}, nil
	case ModeDelete:
		return tool.Result{Content: fmt.Sprintf("Deleted cell %s from %s (%s left).", id, abs, plural(len(nb.cells), "cell"))}, nil
	}
	return tool.Result{Content: fmt.Sprintf("Replaced the source of cell %s in %s.", id, abs)}, nil
}

// renderNotebook shows a notebook's cells for Read: each cell's id, type
// and source, and its outputs as text, with the pictures of its outputs
// (PNG, JPEG) while they fit maxImage; text past maxBytes is cut.
func renderNotebook(abs string, nb *Notebook, maxBytes, maxImage int64) tool.Result {
	var b strings.Builder
	var images []llm.Image
	cells := nb.Cells()
	fmt.Fprintf(&b, "Jupyter notebook %s (nbformat 4.%d, %s)\n", abs, nb.minor, plural(len(cells), "cell"))
	if lang := nb.language(); lang != "" {
		fmt.Fprintf(&b, "language: %s\n", lang)
	}
	for _, c := range cells {
		fmt.Fprintf(&b, "\n<cell id=%q type=%q", c.ID, c.Type)
		if c.Count != "" {
			fmt.Fprintf(&b, " execution_count=%s", c.Count)
		}
		b.WriteString(">\n")
		b.WriteString(strings.TrimSuffix(c.Source, "\n"))
		b.WriteString("\n</cell>\n")
		for _, o := range c.Outputs {
			if o.MediaType != "" {
				im := llm.Image{MediaType: o.MediaType, Data: o.Data}
				if im.Check() == nil && int64(len(o.Data)) <= maxImage && len(images) < maxNotebookPictures {
					images = append(images, im)
					fmt.Fprintf(&b, "<output picture %d: %s, %s>\n", len(images), o.MediaType, size(int64(len(o.Data))))
				} else {
					fmt.Fprintf(&b, "<output %s, %s: not shown>\n", o.MediaType, size(int64(len(o.Data))))
				}
				continue
			}
			fmt.Fprintf(&b, "<output>\n%s\n</output>\n", strings.TrimSuffix(cutUTF8(o.Text, 8<<10), "\n"))
		}
		if int64(b.Len()) > maxBytes {
			break
		}
	}
	text := b.String()
	if int64(len(text)) > maxBytes {
		text = cutUTF8(text, int(maxBytes)) + fmt.Sprintf("\n... [notebook cut at %s; Read it with offset and limit to see its JSON lines]", size(maxBytes))
	}
	return tool.Result{Content: text, Images: images}
}

// language returns the notebook's kernel language, if it names one.
func (nb *Notebook) language() string {
	var md struct {
		Lang struct {
			Name string `json:"name"`
		} `json:"language_info"`
		Kernel struct {
			Language string `json:"language"`
		} `json:"kernelspec"`
	}
	v, _ := nb.top.get("metadata")
	_ = json.Unmarshal(v, &md)
	if md.Lang.Name != "" {
		return md.Lang.Name
	}
	return md.Kernel.Language
}
