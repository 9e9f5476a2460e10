package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
)

type fake struct{ name string }

func (f fake) Spec() llm.ToolSpec                        { return llm.ToolSpec{Name: f.name} }
func (f fake) ReadOnly(json.RawMessage) bool             { return true }
func (f fake) Run(context.Context, Call) (Result, error) { return Result{Content: f.name}, nil }

func TestRegistry(t *testing.T) {
	r, err := NewRegistry(fake{"Read"}, fake{"Bash"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Names(); len(got) != 2 || got[0] != "Read" || got[1] != "Bash" {
		t.Errorf("Names() = %v; want [Read Bash]", got)
	}
	if _, ok := r.Get("Bash"); !ok {
		t.Error("Get(Bash) not found")
	}
	ro := r.Filter(func(n string, _ Tool) bool { return n != "Bash" })
	if got := ro.Names(); len(got) != 1 || got[0] != "Read" {
		t.Errorf("Filter names = %v; want [Read]", got)
	}
	if res := r.Unknown("Rm"); !res.IsError || !strings.Contains(res.Content, "Bash, Read") {
		t.Errorf("Unknown(Rm) = %+v; want an error listing the tools", res)
	}
	if _, err := NewRegistry(fake{"A"}, fake{"A"}); err == nil {
		t.Error("NewRegistry with a duplicate name succeeded")
	}
	if _, err := NewRegistry(fake{""}); err == nil {
		t.Error("NewRegistry with an empty name succeeded")
	}
}

func TestDecode(t *testing.T) {
	type in struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
	}
	tests := []struct {
		name, input, want string
		ok                bool
	}{
		{"valid", `{"path":"a","limit":3}`, "", true},
		{"empty is an empty object", ``, "", true},
		{"wrong type", `{"path":"a","limit":"x"}`, `field "limit" must be int`, false},
		{"unknown field", `{"pth":"a"}`, `unknown field "pth"`, false},
		{"not JSON", `{"path":`, "invalid input", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v in
			res, ok := Decode("Read", json.RawMessage(tt.input), &v)
			if ok != tt.ok || !strings.Contains(res.Content, tt.want) || res.IsError == ok {
				t.Errorf("Decode(%q) = %+v, %v; want ok=%v and content containing %q", tt.input, res, ok, tt.ok, tt.want)
			}
		})
	}
}
