// Package tool is the vocabulary of the tools an agent's model may call: the
// Tool interface, calls and results, a registry, and input decoding with
// errors a model can act on.
//
// A tool failure the model should see (a missing file, a command that
// exited 1, invalid arguments) is a Result with IsError set, never a Go
// error: a Go error from Run means the agent loop itself must stop (its
// context was canceled, or an invariant broke).
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/troupe-dev/troupe/llm"
)

// Tool is one capability a model can call. Implementations are safe for
// concurrent use: read-only calls of one tool may run in parallel.
type Tool interface {
	// Spec returns the name, description and JSON schema shown to the model.
	Spec() llm.ToolSpec
	// ReadOnly reports whether a call with this input changes nothing
	// outside the agent, so that it may run in parallel with other
	// read-only calls. Inputs that do not decode count as not read-only.
	ReadOnly(input json.RawMessage) bool
	// Run executes one call.
	Run(ctx context.Context, call Call) (Result, error)
}

// Call is one invocation of a tool by the model.
type Call struct {
	ID    string          // the tool_use block's id
	Name  string          // the tool's name
	Input json.RawMessage // the model's arguments
}

// Result is what the model sees of a call: its text, and the pictures
// it returned (a Read of an image, an MCP tool's image content), which
// reach the model after the text where the provider takes images.
type Result struct {
	Content string
	Images  []llm.Image
	IsError bool
}

// Errorf returns an error Result with a formatted message.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Decode unmarshals a call's input into v, refusing unknown fields, and
// returns an error Result that names the problem when it fails.
func Decode(name string, input json.RawMessage, v any) (Result, bool) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return Errorf("%s: invalid input: field %q must be %s, got JSON %s", name, te.Field, te.Type, te.Value), false
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return Errorf("%s: invalid input: %s", name, strings.TrimPrefix(err.Error(), "json: ")), false
		default:
			return Errorf("%s: invalid input (not a JSON object matching the schema): %v", name, err), false
		}
	}
	return Result{}, true
}

// Registry is an ordered set of tools with unique names. It is immutable
// once built and safe for concurrent use.
type Registry struct {
	byName map[string]Tool
	order  []string
}

// NewRegistry returns a registry of tools; two tools with one name is an
// error.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		name := t.Spec().Name
		if name == "" {
			return nil, errors.New("tool registry: a tool has an empty name")
		}
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("tool registry: two tools named %q", name)
		}
		r.byName[name] = t
		r.order = append(r.order, name)
	}
	return r, nil
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Names returns the tool names in registration order.
func (r *Registry) Names() []string { return append([]string(nil), r.order...) }

// Deferrer is implemented by tools that may be left out of the specs sent
// to the model until a search tool loads them (MCP servers with many
// tools); they can be called by name all the same.
type Deferrer interface {
	Deferred() bool
}

// Specs returns the specs to send to the model, in registration order,
// without the tools that report Deferred.
func (r *Registry) Specs() []llm.ToolSpec {
	out := make([]llm.ToolSpec, 0, len(r.order))
	for _, n := range r.order {
		t := r.byName[n]
		if d, ok := t.(Deferrer); ok && d.Deferred() {
			continue
		}
		out = append(out, t.Spec())
	}
	return out
}

// Filter returns a registry with the tools keep accepts.
func (r *Registry) Filter(keep func(name string, t Tool) bool) *Registry {
	out := &Registry{byName: map[string]Tool{}}
	for _, n := range r.order {
		if t := r.byName[n]; keep(n, t) {
			out.byName[n] = t
			out.order = append(out.order, n)
		}
	}
	return out
}

// Unknown returns the error Result for a call to a tool that is not in r.
func (r *Registry) Unknown(name string) Result {
	names := r.Names()
	sort.Strings(names)
	return Errorf("no tool named %q; available tools: %s", name, strings.Join(names, ", "))
}
