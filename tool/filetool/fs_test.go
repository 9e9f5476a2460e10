package filetool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/tool"
)

// base is the modification time tree gives files, minus their index.
var base = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// file is one entry of a test tree.
type file struct {
	path    string // slash-separated, relative to the tree
	content string
	age     time.Duration // before base; files are otherwise equally old
}

// tree creates files below a fresh temp directory and returns it.
func tree(t *testing.T, files ...file) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(-f.age)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// run calls tl with input and fails the test on a Go error.
func run(t *testing.T, tl tool.Tool, input string) tool.Result {
	t.Helper()
	res, err := tl.Run(t.Context(), tool.Call{ID: "t1", Name: tl.Spec().Name, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("%s.Run(%s) error = %v; want a Result", tl.Spec().Name, input, err)
	}
	return res
}

// check compares a Result with the wanted error flag and substrings.
func check(t *testing.T, input string, res tool.Result, wantErr bool, want ...string) {
	t.Helper()
	if res.IsError != wantErr {
		t.Errorf("Run(%s).IsError = %v; want %v\ncontent:\n%s", input, res.IsError, wantErr, res.Content)
	}
	for _, w := range want {
		if !strings.Contains(res.Content, w) {
			t.Errorf("Run(%s) content lacks %q; got:\n%s", input, w, res.Content)
		}
	}
}

// js returns v as JSON.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestSpecs(t *testing.T) {
	inputs := map[string]any{
		"Read": readInput{}, "Write": writeInput{}, "Edit": editInput{}, "Glob": globInput{}, "Grep": grepInput{},
	}
	var names []string
	for _, tl := range All(Config{Root: t.TempDir()}) {
		spec := tl.Spec()
		names = append(names, spec.Name)
		if spec.Description == "" || strings.Contains(spec.Description, "{{") {
			t.Errorf("%s description = %q; want a filled-in text", spec.Name, spec.Description)
		}
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
			t.Fatalf("%s schema is not JSON: %v", spec.Name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s schema: type %q, additionalProperties %v; want object, false", spec.Name, schema.Type, schema.AdditionalProperties)
		}
		var fields []string
		typ := reflect.TypeOf(inputs[spec.Name])
		for i := range typ.NumField() {
			fields = append(fields, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
		var props []string
		for p := range schema.Properties {
			props = append(props, p)
		}
		slices.Sort(fields)
		slices.Sort(props)
		if !slices.Equal(fields, props) {
			t.Errorf("%s schema properties = %v; want the input fields %v", spec.Name, props, fields)
		}
		for _, r := range schema.Required {
			if !slices.Contains(fields, r) {
				t.Errorf("%s schema requires %q, which is not a field", spec.Name, r)
			}
		}
	}
	if want := []string{"Read", "Write", "Edit", "Glob", "Grep"}; !slices.Equal(names, want) {
		t.Errorf("All() names = %v; want %v", names, want)
	}
}

func TestInvalidInput(t *testing.T) {
	cfg := Config{Root: tree(t, file{path: "a.txt", content: "x\n"})}
	tests := []struct {
		name  string
		tool  tool.Tool
		input string
		want  string
	}{
		{"Read wrong type", NewRead(cfg), `{"file_path": 3}`, `field "file_path" must be string`},
		{"Read offset type", NewRead(cfg), `{"file_path": "a.txt", "offset": "two"}`, `field "offset" must be int`},
		{"Read unknown field", NewRead(cfg), `{"path": "a.txt"}`, `unknown field "path"`},
		{"Read missing path", NewRead(cfg), `{}`, "file_path is required"},
		{"Read negative offset", NewRead(cfg), `{"file_path": "a.txt", "offset": -1}`, "offset must be"},
		{"Read not JSON", NewRead(cfg), `{"file_path":`, "invalid input"},
		{"Write content type", NewWrite(cfg), `{"file_path": "b", "content": 1}`, `field "content" must be string`},
		{"Write missing content", NewWrite(cfg), `{"file_path": "b"}`, "content is required"},
		{"Write missing path", NewWrite(cfg), `{"content": "x"}`, "file_path is required"},
		{"Edit replace_all type", NewEdit(cfg), `{"file_path": "a.txt", "old_string": "x", "new_string": "y", "replace_all": "yes"}`, `field "replace_all" must be bool`},
		{"Edit missing old_string", NewEdit(cfg), `{"file_path": "a.txt", "new_string": "y"}`, "old_string is required"},
		{"Edit missing new_string", NewEdit(cfg), `{"file_path": "a.txt", "old_string": "y"}`, "new_string is required"},
		{"Glob pattern type", NewGlob(cfg), `{"pattern": ["*"]}`, `field "pattern" must be string`},
		{"Glob missing pattern", NewGlob(cfg), `{}`, "pattern is required"},
		{"Grep -A type", NewGrep(cfg), `{"pattern": "x", "-A": "2"}`, `field "-A" must be int`},
		{"Grep -i type", NewGrep(cfg), `{"pattern": "x", "-i": 1}`, `field "-i" must be bool`},
		{"Grep head_limit negative", NewGrep(cfg), `{"pattern": "x", "head_limit": -1}`, "head_limit must not be negative"},
		{"Grep bad mode", NewGrep(cfg), `{"pattern": "x", "output_mode": "lines"}`, `output_mode must be`},
		{"Grep missing pattern", NewGrep(cfg), `{"path": "."}`, "pattern is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, tt.tool, tt.input)
			check(t, tt.input, res, true, tt.want)
			if tt.tool.ReadOnly(json.RawMessage(tt.input)) && strings.Contains(tt.want, "field") {
				t.Errorf("ReadOnly(%s) = true; want false for an input that does not decode", tt.input)
			}
		})
	}
}

func TestReadOnly(t *testing.T) {
	cfg := Config{Root: t.TempDir()}
	tests := []struct {
		tool  tool.Tool
		input string
		want  bool
	}{
		{NewRead(cfg), `{"file_path": "a"}`, true},
		{NewGlob(cfg), `{"pattern": "*"}`, true},
		{NewGrep(cfg), `{"pattern": "x"}`, true},
		{NewRead(cfg), `{"file_path": 1}`, false},
		{NewWrite(cfg), `{"file_path": "a", "content": ""}`, false},
		{NewEdit(cfg), `{"file_path": "a", "old_string": "", "new_string": "x"}`, false},
	}
	for _, tt := range tests {
		if got := tt.tool.ReadOnly(json.RawMessage(tt.input)); got != tt.want {
			t.Errorf("%s.ReadOnly(%s) = %v; want %v", tt.tool.Spec().Name, tt.input, got, tt.want)
		}
	}
}

func TestContextCanceled(t *testing.T) {
	root := tree(t, file{path: "a.go", content: "package a\n"})
	cfg := Config{Root: root}
	ctx, cancel := contextCanceled(t)
	defer cancel()
	for _, tt := range []struct {
		tool  tool.Tool
		input string
	}{
		{NewGlob(cfg), `{"pattern": "**/*.go"}`},
		{NewGrep(cfg), `{"pattern": "package"}`},
		{NewRead(cfg), `{"file_path": "a.go"}`},
		{NewWrite(cfg), `{"file_path": "b.go", "content": "x"}`},
		{NewEdit(cfg), `{"file_path": "a.go", "old_string": "a", "new_string": "b"}`},
	} {
		if _, err := tt.tool.Run(ctx, tool.Call{Input: json.RawMessage(tt.input)}); err == nil {
			t.Errorf("%s.Run(canceled ctx) error = nil; want the context's error", tt.tool.Spec().Name)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "b.go")); err == nil {
		t.Error("Write with a canceled context created its file")
	}
}

// contextCanceled returns a context that is already canceled.
func contextCanceled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}
