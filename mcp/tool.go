package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// ToolName returns the name the model sees for tool t of server:
// mcp__<server>__<tool>, with characters outside [A-Za-z0-9_-] in the
// tool's name replaced by _.
func ToolName(server, t string) string {
	return "mcp__" + server + "__" + sanitize(t)
}

func sanitize(s string) string {
	return strings.Map(func(c rune) rune {
		if c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return c
		}
		return '_'
	}, s)
}

// Tools returns the tools of every connected server, in configuration
// order, and ListMcpResources and ReadMcpResource when a connected server
// offers resources. A tool keeps calling its server across a restart.
// Whether they are sent to the model with every request or deferred
// until ToolSearch loads them is the caller's policy (tool/toolsearch).
func (m *Manager) Tools() []tool.Tool {
	var out []tool.Tool
	resources := false
	seen := map[string]bool{}
	for _, s := range m.servers {
		s.mu.Lock()
		tools, caps := s.tools, s.caps
		s.mu.Unlock()
		for _, t := range tools {
			mt := newTool(s, t)
			if seen[mt.spec.Name] {
				// A server listing one name twice, or two that read alike
				// once made safe (a.b and a_b): the first is kept, since
				// two tools of one name would break the agent's registry.
				continue
			}
			seen[mt.spec.Name] = true
			out = append(out, mt)
		}
		if caps != nil && caps.Resources != nil {
			resources = true
		}
	}
	if resources {
		out = append(out, &listResources{m: m}, &readResource{m: m})
	}
	return out
}

// Tool is one tool of an MCP server, as a tool.Tool.
type Tool struct {
	s        *server
	name     string // the server's name for it
	spec     llm.ToolSpec
	readOnly bool
}

var _ tool.Tool = (*Tool)(nil)

func newTool(s *server, t *sdk.Tool) *Tool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return &Tool{s: s, name: t.Name, readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
		spec: llm.ToolSpec{Name: ToolName(s.cfg.Name, t.Name), Description: desc, InputSchema: schema}}
}

// Spec returns the tool's name, the server's description and its input
// schema.
func (t *Tool) Spec() llm.ToolSpec { return t.spec }

// ReadOnly reports the server's readOnlyHint annotation.
func (t *Tool) ReadOnly(json.RawMessage) bool { return t.readOnly }

// Run calls the tool on its server within the call timeout. A server
// error, a timeout and a server that died are error Results; only a
// canceled ctx is a Go error.
func (t *Tool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var args json.RawMessage = call.Input
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return tool.Errorf("%s: invalid input: not JSON", t.spec.Name), nil
	}
	sess, err := t.s.current()
	if err != nil {
		return tool.Errorf("%s: %v", t.spec.Name, err), nil
	}
	cctx, cancel := context.WithTimeoutCause(ctx, t.s.m.opts.CallTimeout, errCallTimeout)
	defer cancel()
	res, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: t.name, Arguments: args})
	if err != nil {
		return t.s.callFailed(ctx, cctx, sess, t.spec.Name, err)
	}
	return convert(res), nil
}

var errCallTimeout = errors.New("tool call timed out (MCP_TOOL_TIMEOUT)")

// callFailed turns a failed request on sess into a Result: ctx canceled
// is a Go error, a timeout or a protocol error is an error Result, and a
// broken connection restarts the server once (broken).
func (s *server) callFailed(ctx, cctx context.Context, sess *sdk.ClientSession, name string, err error) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, context.Cause(ctx)
	}
	if cctx.Err() != nil {
		return tool.Errorf("%s: %v after %v", name, context.Cause(cctx), s.m.opts.CallTimeout), nil
	}
	if isBroken(err) {
		return tool.Errorf("%s: %s", name, s.broken(ctx, sess, err)), nil
	}
	return tool.Errorf("%s: %v", name, err), nil
}

// isBroken reports whether err means the connection is gone.
func isBroken(err error) bool {
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "connection closed") || strings.Contains(err.Error(), "client is closing")
}

// convert renders a call's result for the model: text as is, images of
// a type the providers take (PNG, JPEG, GIF, WebP) up to
// llm.MaxImageBytes as pictures, other images and audio as a note of
// their type and size, resource links and embedded resources by URI (with
// their text when embedded, and as a picture when they hold one), and
// structured content as JSON when there is no other content.
func convert(res *sdk.CallToolResult) tool.Result {
	var parts []string
	var images []llm.Image
	for _, c := range res.Content {
		if im, ok := picture(c); ok {
			images = append(images, im)
			continue
		}
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && len(images) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return tool.Result{Content: strings.Join(parts, "\n"), Images: images, IsError: res.IsError}
}

// picture returns c as an image the model can be shown: image content, or
// an embedded resource holding an image, of a supported type and size.
func picture(c sdk.Content) (llm.Image, bool) {
	var im llm.Image
	switch c := c.(type) {
	case *sdk.ImageContent:
		im = llm.Image{MediaType: c.MIMEType, Data: c.Data}
	case *sdk.EmbeddedResource:
		if c.Resource == nil || c.Resource.Blob == nil {
			return im, false
		}
		im = llm.Image{MediaType: c.Resource.MIMEType, Data: c.Resource.Blob}
	default:
		return im, false
	}
	return im, im.Check() == nil && len(im.Data) <= llm.MaxImageBytes
}

func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		if len(c.Data) > llm.MaxImageBytes {
			return fmt.Sprintf("[image %s, %d bytes: not shown, larger than the %d bytes a model takes]", c.MIMEType, len(c.Data), llm.MaxImageBytes)
		}
		return fmt.Sprintf("[image %s, %d bytes: not shown, the model takes PNG, JPEG, GIF and WebP]", c.MIMEType, len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data))
	case *sdk.ResourceLink:
		s := "[resource link " + c.URI
		if c.Name != "" {
			s += " " + c.Name
		}
		if c.MIMEType != "" {
			s += " (" + c.MIMEType + ")"
		}
		if c.Description != "" {
			s += ": " + c.Description
		}
		return s + "]"
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return "[embedded resource]"
		}
		return resourceText(c.Resource)
	default:
		b, _ := json.Marshal(c)
		return string(b)
	}
}

func resourceText(r *sdk.ResourceContents) string {
	if r.Blob != nil {
		return fmt.Sprintf("[resource %s: %s, %d bytes of binary data]", r.URI, r.MIMEType, len(r.Blob))
	}
	return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
}
