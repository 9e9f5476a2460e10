package filetool

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/tool"
)

var notebooks = []string{"analysis.ipynb", "legacy44.ipynb", "r-two-space.ipynb", "empty.ipynb"}

func readNotebook(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "notebooks", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkNotebook fails t unless data is a valid nbformat 4 notebook as the
// schema has it: every cell with cell_type, metadata and source; code
// cells with execution_count and outputs, other cells without; cell ids
// (unique, [A-Za-z0-9_-]{1,64}) in 4.5 and later, none before.
func checkNotebook(t testing.TB, data []byte) map[string]any {
	t.Helper()
	var nb struct {
		Cells    []map[string]json.RawMessage `json:"cells"`
		Metadata map[string]any               `json:"metadata"`
		Major    int                          `json:"nbformat"`
		Minor    int                          `json:"nbformat_minor"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if nb.Major != 4 || nb.Metadata == nil {
		t.Fatalf("nbformat %d, metadata %v", nb.Major, nb.Metadata)
	}
	idRE := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	ids := map[string]bool{}
	for i, c := range nb.Cells {
		var typ string
		_ = json.Unmarshal(c["cell_type"], &typ)
		for _, k := range []string{"metadata", "source"} {
			if c[k] == nil {
				t.Errorf("cell %d has no %s", i, k)
			}
		}
		_, hasOut := c["outputs"]
		_, hasCount := c["execution_count"]
		if (typ == "code") != (hasOut && hasCount) || typ != "code" && (hasOut || hasCount) {
			t.Errorf("cell %d (%s): outputs %v, execution_count %v", i, typ, hasOut, hasCount)
		}
		var id string
		_, hasID := c["id"]
		_ = json.Unmarshal(c["id"], &id)
		switch {
		case nb.Minor >= 5 && (!idRE.MatchString(id) || ids[id]):
			t.Errorf("cell %d: id %q is not a valid, unique id", i, id)
		case nb.Minor < 5 && hasID:
			t.Errorf("cell %d of an nbformat 4.%d notebook has an id", i, nb.Minor)
		}
		ids[id] = true
	}
	var all map[string]any
	_ = json.Unmarshal(data, &all)
	return all
}

// TestNotebookRoundTrip: a notebook parsed and written unchanged is the
// same bytes: nbformat's one-space sorted layout and another editor's
// two-space unsorted one alike.
func TestNotebookRoundTrip(t *testing.T) {
	for _, name := range notebooks {
		data := readNotebook(t, name)
		nb, err := ParseNotebook(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := nb.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, data) {
			t.Errorf("%s changed on a round trip:\n%s", name, out)
		}
		checkNotebook(t, data)
	}
}

// cellsOf returns the cells of data, each re-encoded compactly, by id.
func cellsOf(t *testing.T, data []byte) (ids []string, byID map[string]string) {
	t.Helper()
	var nb struct{ Cells []json.RawMessage }
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatal(err)
	}
	byID = map[string]string{}
	for i, c := range nb.Cells {
		var cell struct{ ID string }
		_ = json.Unmarshal(c, &cell)
		if cell.ID == "" {
			cell.ID = "#" + string(rune('0'+i))
		}
		var b bytes.Buffer
		_ = json.Compact(&b, c)
		ids = append(ids, cell.ID)
		byID[cell.ID] = b.String()
	}
	return ids, byID
}

func TestNotebookApply(t *testing.T) {
	orig := readNotebook(t, "analysis.ipynb")
	_, before := cellsOf(t, orig)
	apply := func(t *testing.T, name string, c NotebookChange) ([]byte, string) {
		t.Helper()
		nb, err := ParseNotebook(readNotebook(t, name))
		if err != nil {
			t.Fatal(err)
		}
		id, err := nb.Apply(c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		out, err := nb.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		checkNotebook(t, out)
		return out, id
	}
	t.Run("replace", func(t *testing.T) {
		out, id := apply(t, "analysis.ipynb", NotebookChange{CellID: "c9d0e1f2", Source: "df = pd.read_csv('sales.csv')\ndf.describe()\n"})
		if id != "c9d0e1f2" {
			t.Errorf("id %q", id)
		}
		ids, after := cellsOf(t, out)
		for _, id := range ids {
			if id != "c9d0e1f2" && after[id] != before[id] {
				t.Errorf("cell %s changed:\n%s\n%s", id, before[id], after[id])
			}
		}
		want := `{"cell_type":"code","execution_count":null,"id":"c9d0e1f2","metadata":{"collapsed":false,"scrolled":true},"outputs":[],"source":["df = pd.read_csv('sales.csv')\n","df.describe()\n"]}`
		if after["c9d0e1f2"] != want {
			t.Errorf("replaced cell = %s\nwant %s", after["c9d0e1f2"], want)
		}
		// Only the replaced cell's lines differ from the file.
		if !bytes.Contains(out, []byte("\"text/plain\": [\n       \"<Figure size 640x480 with 1 Axes>\"")) ||
			!bytes.Contains(out, []byte("café & bar <branch>")) || !bytes.Contains(out, []byte(`\u001b[0;31mZeroDivisionError`)) {
			t.Errorf("the other cells lost their layout or text:\n%s", out)
		}
	})
	t.Run("replace changes the type", func(t *testing.T) {
		out, _ := apply(t, "analysis.ipynb", NotebookChange{CellID: "a1b2c3d4", Source: "print('hi')", Type: "code"})
		_, after := cellsOf(t, out)
		if want := `{"cell_type":"code","execution_count":null,"id":"a1b2c3d4","metadata":{},"outputs":[],"source":["print('hi')"]}`; after["a1b2c3d4"] != want {
			t.Errorf("got %s", after["a1b2c3d4"])
		}
		out, _ = apply(t, "analysis.ipynb", NotebookChange{CellID: "4e5f6a7b", Source: "*gone*", Type: "markdown"})
		if _, after := cellsOf(t, out); after["4e5f6a7b"] != `{"cell_type":"markdown","id":"4e5f6a7b","metadata":{},"source":["*gone*"]}` {
			t.Errorf("got %s", after["4e5f6a7b"])
		}
	})
	t.Run("insert", func(t *testing.T) {
		out, id := apply(t, "analysis.ipynb", NotebookChange{CellID: "e5f6a7b8", Source: "import numpy as np", Type: "code", Mode: ModeInsert})
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(id) {
			t.Errorf("new id %q", id)
		}
		ids, after := cellsOf(t, out)
		if len(ids) != 7 || ids[2] != id {
			t.Fatalf("ids %v; want the new cell third", ids)
		}
		if want := `{"cell_type":"code","execution_count":null,"id":"` + id + `","metadata":{},"outputs":[],"source":["import numpy as np"]}`; after[id] != want {
			t.Errorf("new cell %s", after[id])
		}
		out, id = apply(t, "analysis.ipynb", NotebookChange{Source: "Intro", Type: "markdown", Mode: ModeInsert})
		if ids, _ := cellsOf(t, out); ids[0] != id {
			t.Errorf("insert without cell_id: ids %v, new %s", ids, id)
		}
		out, id = apply(t, "legacy44.ipynb", NotebookChange{CellID: "cell-5", Source: "x", Type: "markdown", Mode: ModeInsert})
		if id != "cell-6" || bytes.Contains(out, []byte(`"id"`)) {
			t.Errorf("insert into 4.4: id %q\n%s", id, out)
		}
		out, id = apply(t, "empty.ipynb", NotebookChange{Source: "1+1", Type: "code", Mode: ModeInsert})
		if ids, _ := cellsOf(t, out); len(ids) != 1 || ids[0] != id {
			t.Errorf("insert into an empty notebook: %s", out)
		}
		out, _ = apply(t, "r-two-space.ipynb", NotebookChange{CellID: "fit", Source: "plot(fit)", Type: "code", Mode: ModeInsert})
		if !bytes.HasPrefix(out, []byte("{\n  \"nbformat\": 4,")) || !bytes.Contains(out, []byte("\"source\": \"fit <- lm(y ~ x, data = d)\\nsummary(fit)\"")) {
			t.Errorf("the two-space, unsorted notebook lost its layout:\n%s", out)
		}
	})
	t.Run("delete", func(t *testing.T) {
		out, id := apply(t, "analysis.ipynb", NotebookChange{CellID: "0a1b2c3d", Mode: ModeDelete})
		ids, after := cellsOf(t, out)
		if id != "0a1b2c3d" || len(ids) != 5 || after["0a1b2c3d"] != "" {
			t.Errorf("delete: %v", ids)
		}
		for _, id := range ids {
			if after[id] != before[id] {
				t.Errorf("cell %s changed", id)
			}
		}
	})
	for _, tt := range []struct {
		c    NotebookChange
		want string
	}{
		{NotebookChange{CellID: "nope", Source: "x"}, `no cell with id "nope"; the cells are: a1b2c3d4, e5f6a7b8`},
		{NotebookChange{Source: "x"}, "cell_id is required to replace"},
		{NotebookChange{Mode: ModeDelete}, "cell_id is required to delete"},
		{NotebookChange{CellID: "a1b2c3d4", Mode: ModeInsert, Source: "x"}, "cell_type is required to insert"},
		{NotebookChange{CellID: "a1b2c3d4", Type: "raw", Source: "x"}, `cell_type "raw"`},
		{NotebookChange{CellID: "cell-0", Source: "x"}, `no cell with id "cell-0"`}, // the cell has a real id
	} {
		nb, _ := ParseNotebook(orig)
		if _, err := nb.Apply(tt.c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v; want %q", tt.c, err, tt.want)
		}
	}
}

func TestParseNotebookRefuses(t *testing.T) {
	for in, want := range map[string]string{
		`[]`: "not a JSON object",
		`{"nbformat":3,"nbformat_minor":0,"metadata":{},"worksheets":[]}`:                           "only version 4",
		`{"nbformat":4,"nbformat_minor":5,"metadata":{}}`:                                           "cells is missing",
		`{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[{"source":"x"}]}`:                  "cell 0 has no cell_type",
		`{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[{"cell_type":"code","source":1}]}`: "neither a string",
		`{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[]} x`:                              "data after",
		`{"nbformat":4,"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[]}`:                   "appears twice",
	} {
		if _, err := ParseNotebook([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", in, err, want)
		}
	}
}

// TestNotebookEditTool runs NotebookEdit on copies of the notebooks and
// Read on the result.
func TestNotebookEditTool(t *testing.T) {
	root := t.TempDir()
	for _, n := range notebooks {
		if err := os.WriteFile(filepath.Join(root, n), readNotebook(t, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Root: root}
	ed, rd := NewNotebookEdit(cfg), NewRead(cfg)
	for _, tt := range []struct {
		input   map[string]any
		isError bool
		want    string
	}{
		{map[string]any{"notebook_path": "analysis.ipynb", "cell_id": "e5f6a7b8", "new_source": "import polars as pl"}, false, "Replaced the source of cell e5f6a7b8 in " + root + "/analysis.ipynb"},
		{map[string]any{"notebook_path": "analysis.ipynb", "new_source": "# Top", "cell_type": "markdown", "edit_mode": "insert"}, false, "Inserted a markdown cell with id "},
		{map[string]any{"notebook_path": filepath.Join(root, "analysis.ipynb"), "cell_id": "8c9d0e1f", "new_source": "", "edit_mode": "delete"}, false, "Deleted cell 8c9d0e1f"},
		{map[string]any{"notebook_path": "analysis.ipynb", "cell_id": "8c9d0e1f", "new_source": "x"}, true, `no cell with id "8c9d0e1f"`},
		{map[string]any{"notebook_path": "notes.txt", "new_source": "x"}, true, "is not a .ipynb file"},
		{map[string]any{"notebook_path": "missing.ipynb", "cell_id": "a", "new_source": "x"}, true, "file not found"},
		{map[string]any{"notebook_path": "analysis.ipynb", "cell_id": "a1b2c3d4"}, true, "new_source is required to replace"},
		{map[string]any{"notebook_path": "analysis.ipynb", "new_source": "x", "edit_mode": "append"}, true, `edit_mode "append"`},
		{map[string]any{"notebook_path": "analysis.ipynb", "new_source": "x", "cell_type": "raw", "edit_mode": "insert"}, true, `cell_type "raw"`},
		{map[string]any{"notebook_path": "analysis.ipynb", "new_source": "x", "cell": "1"}, true, `unknown field "cell"`},
	} {
		res := runToolResult(t, ed, tt.input)
		if res.IsError != tt.isError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%v = %+v; want error %v with %q", tt.input, res, tt.isError, tt.want)
		}
	}
	data, _ := os.ReadFile(filepath.Join(root, "analysis.ipynb"))
	all := checkNotebook(t, data)
	if cells := all["cells"].([]any); len(cells) != 6 {
		t.Errorf("%d cells after replace, insert and delete; want 6", len(cells))
	}
	res := runToolResult(t, rd, map[string]any{"file_path": "analysis.ipynb"})
	for _, want := range []string{
		"Jupyter notebook " + root + "/analysis.ipynb (nbformat 4.5, 6 cells)", "language: python",
		"<cell id=\"e5f6a7b8\" type=\"code\">\nimport polars as pl\n</cell>",
		"<cell id=\"c9d0e1f2\" type=\"code\" execution_count=2>", "<output>\nrows: 1200\ncolumns: 5\n</output>",
		"0  2024-01   1200.5", "<output picture 1: image/png, 66 bytes>", "<output>\nZeroDivisionError: division by zero\n</output>",
	} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("Read of the notebook lacks %q:\n%s", want, res.Content)
		}
	}
	if len(res.Images) != 1 || res.Images[0].MediaType != "image/png" {
		t.Errorf("Read's pictures: %d", len(res.Images))
	}
	res = runToolResult(t, rd, map[string]any{"file_path": "legacy44.ipynb"})
	if !strings.Contains(res.Content, "<cell id=\"cell-0\" type=\"markdown\">") {
		t.Errorf("a 4.4 notebook's cells are not addressed as cell-N:\n%s", res.Content)
	}
	if res := runToolResult(t, rd, map[string]any{"file_path": "legacy44.ipynb", "offset": 1, "limit": 2}); !strings.Contains(res.Content, "     1\t{") {
		t.Errorf("Read with a range shows the JSON lines: %s", res.Content)
	}
	var _ tool.Tool = ed
}

// FuzzNotebook: whatever ParseNotebook accepts is written back as JSON it
// accepts again, with the same cells, and stays valid through an insert
// and a delete.
func FuzzNotebook(f *testing.F) {
	for _, n := range notebooks {
		f.Add(readNotebook(f, n))
	}
	f.Add([]byte(`{"nbformat":4,"nbformat_minor":2,"metadata":{},"cells":[{"cell_type":"code","source":"a\nb","outputs":[{"output_type":"stream","text":["x"]}]}]}`))
	f.Add([]byte(`{"nbformat":4.0,"nbformat_minor":5,"metadata":{"a":[1,{"b":null}]},"cells":[{"cell_type":"x","id":"a","source":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		nb, err := ParseNotebook(data)
		if err != nil {
			return
		}
		cells := nb.Cells()
		out, err := nb.Marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := ParseNotebook(out)
		if err != nil {
			t.Fatalf("written notebook does not parse: %v\n%s", err, out)
		}
		if got := again.Cells(); len(got) != len(cells) {
			t.Fatalf("%d cells, then %d", len(cells), len(got))
		}
		id, err := again.Apply(NotebookChange{Source: "new\ncell", Type: "code", Mode: ModeInsert})
		if err != nil {
			t.Fatalf("insert: %v", err)
		}
		if _, err := again.Apply(NotebookChange{CellID: id, Mode: ModeDelete}); err != nil && again.minor >= 5 {
			t.Fatalf("delete %s: %v", id, err)
		}
		if out, err = again.Marshal(); err != nil || !json.Valid(out) {
			t.Fatalf("after insert and delete: %v\n%s", err, out)
		}
	})
}
