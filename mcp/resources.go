package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// The resource tools' names, as in Claude Code.
const (
	ListResourcesName = "ListMcpResources"
	ReadResourceName  = "ReadMcpResource"
)

// listResources is the ListMcpResources tool: the resources of one
// server or of all.
type listResources struct{ m *Manager }

func (*listResources) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: ListResourcesName,
		Description: "List the resources (files, records, documents) that connected MCP servers offer, with their URIs. Give server to list one server's only.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"the MCP server's name; omit for every server"}},"additionalProperties":false}`)}
}

func (*listResources) ReadOnly(json.RawMessage) bool { return true }

func (l *listResources) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		Server string `json:"server"`
	}
	if res, ok := tool.Decode(ListResourcesName, call.Input, &in); !ok {
		return res, nil
	}
	var out []string
	found := false
	for _, s := range l.m.servers {
		if in.Server != "" && s.cfg.Name != in.Server {
			continue
		}
		found = true
		s.mu.Lock()
		has := s.caps != nil && s.caps.Resources != nil
		s.mu.Unlock()
		if !has {
			continue
		}
		sess, err := s.current()
		if err != nil {
			out = append(out, fmt.Sprintf("server %s: %v", s.cfg.Name, err))
			continue
		}
		cctx, cancel := context.WithTimeoutCause(ctx, l.m.opts.CallTimeout, errCallTimeout)
		n := 0
		for r, err := range sess.Resources(cctx, nil) {
			if err != nil {
				res, gerr := s.callFailed(ctx, cctx, sess, ListResourcesName, err)
				if gerr != nil {
					cancel()
					return res, gerr
				}
				out = append(out, fmt.Sprintf("server %s: %s", s.cfg.Name, res.Content))
				break
			}
			if n == MaxListed {
				// A server paging without end (or holding millions) would
				// fill memory and the model's context until the timeout.
				out = append(out, fmt.Sprintf("server %s: more than %d resources; the list stops here", s.cfg.Name, MaxListed))
				break
			}
			n++
			line := fmt.Sprintf("server %s: %s", s.cfg.Name, r.URI)
			if r.Name != "" {
				line += " (" + r.Name + ")"
			}
			if r.MIMEType != "" {
				line += " " + r.MIMEType
			}
			if r.Description != "" {
				line += ": " + r.Description
			}
			out = append(out, line)
		}
		cancel()
	}
	if in.Server != "" && !found {
		return tool.Errorf("%s: no MCP server named %q; servers: %s", ListResourcesName, in.Server, strings.Join(l.m.names(), ", ")), nil
	}
	if len(out) == 0 {
		return tool.Result{Content: "No resources found."}, nil
	}
	return tool.Result{Content: strings.Join(out, "\n")}, nil
}

func (m *Manager) names() []string {
	var out []string
	for _, s := range m.servers {
		out = append(out, s.cfg.Name)
	}
	return out
}

// readResource is the ReadMcpResource tool.
type readResource struct{ m *Manager }

func (*readResource) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: ReadResourceName,
		Description: "Read one resource of an MCP server by its URI (see ListMcpResources).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"the MCP server's name"},"uri":{"type":"string","description":"the resource's URI"}},"required":["server","uri"],"additionalProperties":false}`)}
}

func (*readResource) ReadOnly(json.RawMessage) bool { return true }

func (r *readResource) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	if res, ok := tool.Decode(ReadResourceName, call.Input, &in); !ok {
		return res, nil
	}
	if in.Server == "" || in.URI == "" {
		return tool.Errorf("%s: server and uri are both required", ReadResourceName), nil
	}
	var s *server
	for _, c := range r.m.servers {
		if c.cfg.Name == in.Server {
			s = c
		}
	}
	if s == nil {
		return tool.Errorf("%s: no MCP server named %q; servers: %s", ReadResourceName, in.Server, strings.Join(r.m.names(), ", ")), nil
	}
	sess, err := s.current()
	if err != nil {
		return tool.Errorf("%s: %v", ReadResourceName, err), nil
	}
	cctx, cancel := context.WithTimeoutCause(ctx, r.m.opts.CallTimeout, errCallTimeout)
	defer cancel()
	res, err := sess.ReadResource(cctx, &sdk.ReadResourceParams{URI: in.URI})
	if err != nil {
		return s.callFailed(ctx, cctx, sess, ReadResourceName, err)
	}
	var parts []string
	var images []llm.Image
	for _, c := range res.Contents {
		if im, ok := picture(&sdk.EmbeddedResource{Resource: c}); ok {
			parts = append(parts, fmt.Sprintf("[resource %s: %s, %d bytes, shown as a picture]", c.URI, c.MIMEType, len(c.Blob)))
			images = append(images, im)
			continue
		}
		parts = append(parts, resourceText(c))
	}
	return tool.Result{Content: strings.Join(parts, "\n"), Images: images}, nil
}
