package filetool

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// A Jupyter notebook (nbformat 4, https://nbformat.readthedocs.io) as
// NotebookEdit changes it: the objects keep their keys in the file's
// order, and the cells NotebookEdit does not touch keep their JSON as
// read, so that a saved notebook differs from the original only where the
// edit is.

// member is one key of a JSON object and its value as read.
type member struct {
	Key   string
	Value json.RawMessage
}

// object is a JSON object whose key order is kept.
type object []member

// get returns the value of key.
func (o object) get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// set sets key, in place when it is there; a new key goes where it
// sorts when the keys are sorted (as nbformat writes them), else at the
// end.
func (o *object) set(key string, v json.RawMessage) {
	sorted := true
	for i, m := range *o {
		if m.Key == key {
			(*o)[i].Value = v
			return
		}
		sorted = sorted && (i == 0 || (*o)[i-1].Key < m.Key)
	}
	at := len(*o)
	if sorted {
		at, _ = slices.BinarySearchFunc(*o, key, func(m member, k string) int { return strings.Compare(m.Key, k) })
	}
	*o = slices.Insert(*o, at, member{key, v})
}

// del removes key.
func (o *object) del(key string) {
	for i, m := range *o {
		if m.Key == key {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

// parseObject reads one JSON object, refusing anything else, duplicate
// keys and data after it.
func parseObject(data []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var o object
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		o = append(o, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// marshal writes o compactly, keys in order.
func (o object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Notebook is a parsed nbformat 4 notebook.
type Notebook struct {
	top    object
	cells  []object
	minor  int
	indent string // the file's indentation unit ("" when it was compact)
	final  bool   // the file ended with a newline
}

// Cell is one cell as shown to the model.
type Cell struct {
	ID      string // its id, or "cell-N" (N from 0) when it has none
	Type    string // code, markdown or raw
	Source  string
	Outputs []Output
	Count   string // execution_count of a code cell, "" when null
}

// Output is one output of a code cell, as text (or a picture).
type Output struct {
	Text      string // stream text, text/plain, an error's name and value
	MediaType string // image/png or image/jpeg when the output is a picture
	Data      []byte // the picture's bytes
}

// ParseNotebook parses an nbformat 4 notebook, refusing anything that is
// not one (another nbformat, cells that are not objects or lack a
// cell_type or source).
func ParseNotebook(data []byte) (*Notebook, error) {
	top, err := parseObject(data)
	if err != nil {
		return nil, fmt.Errorf("not a notebook: %w", err)
	}
	var nb Notebook
	nb.top = top
	var major int
	if v, ok := top.get("nbformat"); !ok || json.Unmarshal(v, &major) != nil || major != 4 {
		return nil, fmt.Errorf("not an nbformat 4 notebook (nbformat is %s); only version 4 notebooks can be edited", orMissing(v, ok))
	}
	if v, ok := top.get("nbformat_minor"); !ok || json.Unmarshal(v, &nb.minor) != nil || nb.minor < 0 {
		return nil, fmt.Errorf("not an nbformat 4 notebook: nbformat_minor is %s", orMissing(v, ok))
	}
	if v, ok := top.get("metadata"); !ok || !isObject(v) {
		return nil, errors.New("not an nbformat 4 notebook: metadata is missing or not an object")
	}
	raw, ok := top.get("cells")
	var cells []json.RawMessage
	if !ok || json.Unmarshal(raw, &cells) != nil {
		return nil, errors.New("not an nbformat 4 notebook: cells is missing or not an array")
	}
	for i, c := range cells {
		o, err := parseObject(c)
		if err != nil {
			return nil, fmt.Errorf("cell %d: %w", i, err)
		}
		var typ string
		if v, ok := o.get("cell_type"); !ok || json.Unmarshal(v, &typ) != nil || typ == "" {
			return nil, fmt.Errorf("cell %d has no cell_type", i)
		}
		if _, err := sourceOf(o); err != nil {
			return nil, fmt.Errorf("cell %d: %w", i, err)
		}
		nb.cells = append(nb.cells, o)
	}
	nb.indent = indentOf(data)
	nb.final = bytes.HasSuffix(data, []byte("\n"))
	return &nb, nil
}

func orMissing(v json.RawMessage, ok bool) string {
	if !ok {
		return "missing"
	}
	return string(v)
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// indentOf returns the indentation of the file's second line: nbformat
// writes one space, other tools two or four.
func indentOf(data []byte) string {
	_, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return ""
	}
	n := 0
	for n < len(rest) && (rest[n] == ' ' || rest[n] == '\t') {
		n++
	}
	return string(rest[:n])
}

// sourceOf returns a cell's source: a string, or a list of strings
// joined.
func sourceOf(o object) (string, error) {
	v, ok := o.get("source")
	if !ok {
		return "", errors.New("no source")
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, nil
	}
	var lines []string
	if err := json.Unmarshal(v, &lines); err != nil {
		return "", errors.New("source is neither a string nor a list of strings")
	}
	return strings.Join(lines, ""), nil
}

// Cells returns the notebook's cells.
func (nb *Notebook) Cells() []Cell {
	out := make([]Cell, len(nb.cells))
	for i, o := range nb.cells {
		c := Cell{ID: cellID(o, i)}
		_ = json.Unmarshal(mustGet(o, "cell_type"), &c.Type)
		c.Source, _ = sourceOf(o)
		if v, ok := o.get("execution_count"); ok && string(v) != "null" {
			c.Count = string(v)
		}
		c.Outputs = outputsOf(o)
		out[i] = c
	}
	return out
}

func mustGet(o object, key string) json.RawMessage {
	v, _ := o.get(key)
	return v
}

// cellID returns a cell's id, or "cell-N" when it has none.
func cellID(o object, i int) string {
	var id string
	if v, ok := o.get("id"); ok && json.Unmarshal(v, &id) == nil && id != "" {
		return id
	}
	return "cell-" + strconv.Itoa(i)
}

// outputsOf returns what a code cell's outputs show.
func outputsOf(o object) []Output {
	var outs []struct {
		Type   string                     `json:"output_type"`
		Text   json.RawMessage            `json:"text"`
		Data   map[string]json.RawMessage `json:"data"`
		Ename  string                     `json:"ename"`
		Evalue string                     `json:"evalue"`
	}
	v, ok := o.get("outputs")
	if !ok || json.Unmarshal(v, &outs) != nil {
		return nil
	}
	var res []Output
	for _, x := range outs {
		switch x.Type {
		case "stream":
			res = append(res, Output{Text: multiline(x.Text)})
		case "error":
			res = append(res, Output{Text: x.Ename + ": " + x.Evalue})
		case "execute_result", "display_data":
			for _, mt := range []string{"image/png", "image/jpeg"} {
				var b64 string
				if raw, ok := x.Data[mt]; ok {
					if json.Unmarshal(raw, &b64) == nil {
						if data, err := decodeBase64(b64); err == nil {
							res = append(res, Output{MediaType: mt, Data: data})
						}
					}
				}
			}
			if raw, ok := x.Data["text/plain"]; ok {
				res = append(res, Output{Text: multiline(raw)})
			}
		}
	}
	return res
}

// multiline reads nbformat's multiline string: a string or a list of them.
func multiline(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var lines []string
	_ = json.Unmarshal(v, &lines)
	return strings.Join(lines, "")
}

// find returns the index of the cell id names: its id, else "cell-N".
func (nb *Notebook) find(id string) (int, bool) {
	for i, o := range nb.cells {
		var got string
		if v, ok := o.get("id"); ok && json.Unmarshal(v, &got) == nil && got == id {
			return i, true
		}
	}
	if n, ok := strings.CutPrefix(id, "cell-"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < len(nb.cells) && cellID(nb.cells[i], i) == id {
			return i, true
		}
	}
	return 0, false
}

// The edit modes of NotebookEdit.
const (
	ModeReplace = "replace"
	ModeInsert  = "insert"
	ModeDelete  = "delete"
)

// NotebookChange is one change to a notebook (NotebookEdit's input).
type NotebookChange struct {
	CellID string // the cell to replace or delete, or to insert after ("" inserts first)
	Source string
	Type   string // code or markdown; "" keeps a replaced cell's type
	Mode   string // ModeReplace (default), ModeInsert or ModeDelete
}

// Apply makes the change and returns the id of the cell it made or
// changed (for delete, the one removed).
func (nb *Notebook) Apply(c NotebookChange) (string, error) {
	if c.Mode == "" {
		c.Mode = ModeReplace
	}
	switch c.Type {
	case "", "code", "markdown":
	default:
		return "", fmt.Errorf("cell_type %q: want code or markdown", c.Type)
	}
	at := -1
	if c.CellID != "" {
		i, ok := nb.find(c.CellID)
		if !ok {
			return "", fmt.Errorf("no cell with id %q; the cells are: %s", c.CellID, strings.Join(nb.ids(), ", "))
		}
		at = i
	}
	switch c.Mode {
	case ModeReplace:
		if at < 0 {
			return "", errors.New("cell_id is required to replace a cell")
		}
		o := nb.cells[at]
		var old string
		_ = json.Unmarshal(mustGet(o, "cell_type"), &old)
		typ := c.Type
		if typ == "" {
			typ = old
		}
		o.set("source", sourceJSON(c.Source))
		if typ != old {
			o.set("cell_type", jsonString(typ))
		}
		if typ == "code" {
			// The outputs were of the old source: they would mislead.
			o.set("execution_count", json.RawMessage("null"))
			o.set("outputs", json.RawMessage("[]"))
		} else {
			o.del("execution_count")
			o.del("outputs")
		}
		nb.cells[at] = o
		return cellID(o, at), nil
	case ModeInsert:
		if c.Type == "" {
			return "", errors.New("cell_type is required to insert a cell (code or markdown)")
		}
		o, id, err := nb.newCell(c.Type, c.Source)
		if err != nil {
			return "", err
		}
		nb.cells = append(nb.cells[:at+1], append([]object{o}, nb.cells[at+1:]...)...)
		if id == "" {
			id = "cell-" + strconv.Itoa(at+1)
		}
		return id, nil
	case ModeDelete:
		if at < 0 {
			return "", errors.New("cell_id is required to delete a cell")
		}
		id := cellID(nb.cells[at], at)
		nb.cells = append(nb.cells[:at], nb.cells[at+1:]...)
		return id, nil
	}
	return "", fmt.Errorf("edit_mode %q: want replace, insert or delete", c.Mode)
}

// ids returns the cells' ids.
func (nb *Notebook) ids() []string {
	var out []string
	for i, o := range nb.cells {
		out = append(out, cellID(o, i))
	}
	if len(out) == 0 {
		return []string{"(none: the notebook is empty)"}
	}
	return out
}

// newCell returns a new cell, with a fresh id when the notebook is
// nbformat 4.5 or later (earlier versions allow none).
func (nb *Notebook) newCell(typ, source string) (object, string, error) {
	var o object
	id := ""
	o.set("cell_type", jsonString(typ))
	if nb.minor >= 5 {
		var err error
		if id, err = nb.freshID(); err != nil {
			return nil, "", err
		}
		o.set("id", jsonString(id))
	}
	o.set("metadata", json.RawMessage("{}"))
	if typ == "code" {
		o.set("execution_count", json.RawMessage("null"))
		o.set("outputs", json.RawMessage("[]"))
	}
	o.set("source", sourceJSON(source))
	return o, id, nil
}

// freshID returns 8 random hex digits no cell has as its id, as Jupyter
// makes them.
func (nb *Notebook) freshID() (string, error) {
	for range 16 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		id := hex.EncodeToString(b[:])
		if _, taken := nb.find(id); !taken {
			return id, nil
		}
	}
	return "", errors.New("could not make a cell id no cell has")
}

// sourceJSON writes source as nbformat does: a list of lines, each but
// the last ending in "\n".
func sourceJSON(s string) json.RawMessage {
	lines := []string{}
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return marshalNoEscape(lines)
}

func jsonString(s string) json.RawMessage { return marshalNoEscape(s) }

// marshalNoEscape marshals v without escaping <, > and & (as Jupyter
// writes them).
func marshalNoEscape(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Marshal returns the notebook's JSON, indented as the file was.
func (nb *Notebook) Marshal() ([]byte, error) {
	cells := make([]json.RawMessage, len(nb.cells))
	for i, o := range nb.cells {
		cells[i] = o.marshal()
	}
	var arr bytes.Buffer
	arr.WriteByte('[')
	for i, c := range cells {
		if i > 0 {
			arr.WriteByte(',')
		}
		arr.Write(c)
	}
	arr.WriteByte(']')
	top := append(object(nil), nb.top...)
	top.set("cells", arr.Bytes())
	var out bytes.Buffer
	if nb.indent == "" {
		if err := json.Compact(&out, top.marshal()); err != nil {
			return nil, err
		}
	} else if err := json.Indent(&out, top.marshal(), "", nb.indent); err != nil {
		return nil, err
	}
	if nb.final {
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// decodeBase64 decodes a notebook's base64 picture, which may be split
// into lines.
func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' {
			return -1
		}
		return r
	}, s))
}
