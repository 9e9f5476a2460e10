package mcp

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/troupe-dev/troupe/tool"
)

// Exposed is a set of tool.Tools served over MCP (troupe mcp serve):
// each tool keeps its name, description and input schema, and its Result
// becomes the call's text content (IsError included), followed by its
// images. A Go error from a
// tool's Run is a protocol error of that call.
type Exposed struct {
	srv *sdk.Server
}

// Expose returns a server named name offering tools; instructions tell
// the connecting agent what it is for.
func Expose(name, version, instructions string, tools []tool.Tool) *Exposed {
	srv := sdk.NewServer(&sdk.Implementation{Name: name, Version: version}, &sdk.ServerOptions{Instructions: instructions})
	for _, t := range tools {
		spec := t.Spec()
		var schema any = json.RawMessage(spec.InputSchema)
		if len(spec.InputSchema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		st := &sdk.Tool{Name: spec.Name, Description: spec.Description, InputSchema: schema}
		if t.ReadOnly(nil) {
			st.Annotations = &sdk.ToolAnnotations{ReadOnlyHint: true}
		}
		srv.AddTool(st, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := t.Run(ctx, tool.Call{Name: spec.Name, Input: req.Params.Arguments})
			if err != nil {
				return nil, err
			}
			content := []sdk.Content{&sdk.TextContent{Text: res.Content}}
			for _, im := range res.Images {
				content = append(content, &sdk.ImageContent{MIMEType: im.MediaType, Data: im.Data})
			}
			return &sdk.CallToolResult{IsError: res.IsError, Content: content}, nil
		})
	}
	return &Exposed{srv: srv}
}

// ServeStdio serves one client on in and out (newline-delimited JSON-RPC)
// until it disconnects or ctx ends.
func (e *Exposed) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return e.srv.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
}

// Handler returns the streamable HTTP handler serving e.
func (e *Exposed) Handler() http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return e.srv }, nil)
}

// MinTokenLen is the shortest bearer token ServeHTTP accepts.
const MinTokenLen = 16

// ServeHTTP serves e as streamable HTTP on ln until ctx ends, then shuts
// the server down gracefully (bounded by 5 s). Every request needs
// "Authorization: Bearer <token>" (compared in constant time), else 401:
// without it any local user or process could act as the member. A token
// shorter than MinTokenLen is refused.
func (e *Exposed) ServeHTTP(ctx context.Context, ln net.Listener, token string) error {
	if len(token) < MinTokenLen {
		return fmt.Errorf("mcp serve: bearer token of %d characters: use at least %d", len(token), MinTokenLen)
	}
	want := []byte("Bearer " + token)
	next := e.Handler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "troupe mcp serve: missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	defer func() { <-done }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
