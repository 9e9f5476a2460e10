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
	"sync"

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

// Registry is an ordered set of tools with unique names. Its tools are
// fixed once built; what changes is which deferred tools the conversation
// has loaded (Load), so each agent's conversation has a registry of its
// own (NewRegistry, Fresh). It is safe for concurrent use.
type Registry struct {
	byName map[string]Tool
	order  []string
	// deferred names the tools left out of Specs until loaded.
	deferred map[string]bool
	loaded   *loadedSet
}

// loadedSet is the deferred tools a conversation has loaded.
type loadedSet struct {
	mu    sync.Mutex
	names map[string]bool // guarded by mu
}

// NewRegistry returns a registry of tools; two tools with one name is an
// error. A tool that reports Deferred (Deferrer) starts deferred.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]Tool, len(tools)), deferred: map[string]bool{}, loaded: &loadedSet{}}
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
		if d, ok := t.(Deferrer); ok && d.Deferred() {
			r.deferred[name] = true
		}
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

// Deferrer is implemented by tools that are left out of the specs sent to
// the model until ToolSearch loads them (the MCP tools of a large set of
// servers, built-ins deferred by setting: Defer); the model is told their
// names only.
type Deferrer interface {
	Deferred() bool
}

// Defer returns t as a deferred tool (Deferrer).
func Defer(t Tool) Tool {
	if d, ok := t.(Deferrer); ok && d.Deferred() {
		return t
	}
	return deferred{t}
}

// IsDeferred reports whether t is a deferred tool (Deferrer).
func IsDeferred(t Tool) bool {
	d, ok := t.(Deferrer)
	return ok && d.Deferred()
}

// DeferredLike returns t deferred when like is: a tool rebuilt in
// another's place (for another folder) keeps its deferral.
func DeferredLike(t, like Tool) Tool {
	if IsDeferred(like) {
		return Defer(t)
	}
	return t
}

// deferred is a tool wrapped by Defer.
type deferred struct{ Tool }

func (deferred) Deferred() bool { return true }

// Unwrap returns the tool Defer wrapped.
func (d deferred) Unwrap() Tool { return d.Tool }

// Specs returns the specs to send to the model, in registration order,
// without the deferred tools the conversation has not loaded.
func (r *Registry) Specs() []llm.ToolSpec {
	out := make([]llm.ToolSpec, 0, len(r.order))
	for _, n := range r.order {
		if r.Pending(n) {
			continue
		}
		out = append(out, r.byName[n].Spec())
	}
	return out
}

// Deferred returns the names of the deferred tools, loaded or not, in
// registration order.
func (r *Registry) Deferred() []string {
	var out []string
	for _, n := range r.order {
		if r.deferred[n] {
			out = append(out, n)
		}
	}
	return out
}

// Pending reports whether name is a deferred tool this conversation has
// not loaded: the model has seen only its name and must not call it yet.
func (r *Registry) Pending(name string) bool {
	if !r.deferred[name] {
		return false
	}
	r.loaded.mu.Lock()
	defer r.loaded.mu.Unlock()
	return !r.loaded.names[name]
}

// Load marks deferred tools as loaded: from the next request on their
// specs are sent and they may be called. Names that are not deferred
// tools of r are ignored.
func (r *Registry) Load(names ...string) {
	r.loaded.mu.Lock()
	defer r.loaded.mu.Unlock()
	if r.loaded.names == nil {
		r.loaded.names = map[string]bool{}
	}
	for _, n := range names {
		if r.deferred[n] {
			r.loaded.names[n] = true
		}
	}
}

// Fresh returns a registry of the same tools for another conversation:
// none of its deferred tools is loaded.
func (r *Registry) Fresh() *Registry {
	out := *r
	out.loaded = &loadedSet{}
	return &out
}

// NotLoaded is the error Result of a call to a deferred tool before
// ToolSearch loaded it.
func NotLoaded(name string) Result {
	return Errorf("%s is a deferred tool and is not loaded yet: call ToolSearch with query \"select:%s\" to load its definition, then call it again", name, name)
}

// DeferredNote returns the text that tells the model which deferred tools
// exist (names only), or "" when there are none.
func (r *Registry) DeferredNote() string {
	names := r.Deferred()
	if len(names) == 0 {
		return ""
	}
	return "<available-deferred-tools>\nThese tools exist but their definitions are not loaded; load the ones you need with ToolSearch (query \"select:Name1,Name2\" or keywords) before calling them:\n" +
		strings.Join(names, "\n") + "\n</available-deferred-tools>"
}

type registryKey struct{}

// WithRegistry returns ctx carrying the registry of the conversation that
// makes a call, for tools that act on it (ToolSearch loads into it).
func WithRegistry(ctx context.Context, r *Registry) context.Context {
	return context.WithValue(ctx, registryKey{}, r)
}

// RegistryFrom returns the registry WithRegistry put in ctx.
func RegistryFrom(ctx context.Context) (*Registry, bool) {
	r, ok := ctx.Value(registryKey{}).(*Registry)
	return r, ok && r != nil
}

// Filter returns a registry with the tools keep accepts; they keep their
// deferral, and the conversation starts with none of them loaded.
func (r *Registry) Filter(keep func(name string, t Tool) bool) *Registry {
	out := &Registry{byName: map[string]Tool{}, deferred: map[string]bool{}, loaded: &loadedSet{}}
	for _, n := range r.order {
		if t := r.byName[n]; keep(n, t) {
			out.byName[n] = t
			out.order = append(out.order, n)
			if r.deferred[n] {
				out.deferred[n] = true
			}
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
