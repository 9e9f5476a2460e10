// Package mcptest holds a go-sdk MCP server for tests: the tools and
// resources the mcp package's tests and cmd's call, served over stdio
// (Serve, from a test binary's TestMain) or HTTP.
package mcptest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Env selects the behaviour of a test binary started as a stdio MCP
// server: ok, counter (NewCounterServer), fail (exits with a message on
// stderr) or hang.
const Env = "TROUPE_MCP_TEST_SERVER"

// Serve acts as a stdio MCP server when Env is set, and then exits; it
// returns at once when Env is not set. Call it first in TestMain.
func Serve() {
	switch os.Getenv(Env) {
	case "":
		return
	case "ok", "counter":
		srv := NewServer()
		if os.Getenv(Env) == "counter" {
			srv = NewCounterServer()
		}
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "fail":
		fmt.Fprintln(os.Stderr, "starting test server")
		fmt.Fprintln(os.Stderr, "fatal: TEST_API_KEY is not set")
		os.Exit(2)
	case "hang":
		select {} // reads nothing, answers nothing
	}
	fmt.Fprintf(os.Stderr, "%s=%q: want ok, counter, fail or hang\n", Env, os.Getenv(Env))
	os.Exit(2)
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type sleepIn struct {
	Millis int `json:"millis"`
}

// PNG is the picture the media tool returns: a real 4x3 PNG.
var PNG = func() []byte {
	var buf bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
}()

// NewServer returns a go-sdk server with the tools and resources the
// tests call: the tools echo (read-only), media (text, the image PNG, a
// resource link), sleep, die (exits the process mid-call) and fail (an
// error result), and the resources test://hello (text) and test://dot
// (PNG).
func NewServer() *sdk.Server { return newServer(nil) }

// NewCounterServer returns NewServer's server with resource subscriptions:
// one more tool, bump (adds one to test://counter and sends
// notifications/resources/updated for it), and the subscribable resource
// test://counter ("count N"). A stdio test binary serves it when Env is
// "counter".
func NewCounterServer() *sdk.Server {
	var count atomic.Int64
	s := newServer(&sdk.ServerOptions{
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	sdk.AddTool(s, &sdk.Tool{Name: "bump", Description: "Add one to test://counter."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			n := count.Add(1)
			if err := s.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: "test://counter"}); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("count %d", n)}}}, nil, nil
		})
	s.AddResource(&sdk.Resource{URI: "test://counter", Name: "counter", MIMEType: "text/plain"},
		func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: fmt.Sprintf("count %d", count.Load())}}}, nil
		})
	return s
}

func newServer(opts *sdk.ServerOptions) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, opts)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "media", Description: "Return mixed content."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here"},
				&sdk.ImageContent{MIMEType: "image/png", Data: PNG},
				&sdk.ResourceLink{URI: "test://hello", Name: "hello", MIMEType: "text/plain"},
			}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "sleep", Description: "Sleep."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in sleepIn) (*sdk.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.Millis) * time.Millisecond):
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "slept"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "die", Description: "Exit the server process."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "dying on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Fail."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it failed"}}}, nil, nil
		})
	s.AddResource(&sdk.Resource{URI: "test://dot", Name: "dot", MIMEType: "image/png"},
		func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, MIMEType: "image/png", Blob: PNG}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: "test://hello", Name: "hello", MIMEType: "text/plain"},
		func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: "hello, world"}}}, nil
		})
	return s
}

// HTTP starts the test server over streamable HTTP and SSE, each
// requiring the header X-Test: yes, and returns their URLs.
func HTTP(t testing.TB) (streamable, sse string) {
	t.Helper()
	srv := NewServer()
	get := func(*http.Request) *sdk.Server { return srv }
	check := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Test") != "yes" {
				http.Error(w, "missing X-Test header", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", check(sdk.NewStreamableHTTPHandler(get, nil)))
	mux.Handle("/sse", check(sdk.NewSSEHandler(get, nil)))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp", hs.URL + "/sse"
}

// ManyHTTP starts a server with n tools (op0, op1, ..., each "operation
// number i on widgets", and launch, "launch the rocket") over streamable
// HTTP and returns its URL.
func ManyHTTP(t testing.TB, n int) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "many", Version: "1"}, nil)
	add := func(name, desc string) {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: desc},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " done"}}}, nil, nil
			})
	}
	for i := range n {
		add(fmt.Sprintf("op%d", i), fmt.Sprintf("operation number %d on widgets", i))
	}
	add("launch", "launch the rocket")
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// NPMServersEnv overrides where .ci/run installs the reference MCP
// servers (a node_modules folder).
const NPMServersEnv = "TROUPE_MCP_NPM_SERVERS"

// ConformanceEnv overrides where .ci/run installs the conformance suite
// (a node_modules folder).
const ConformanceEnv = "TROUPE_MCP_CONFORMANCE"

// npmDirs are the folders .ci/run installs npm packages into, under
// ~/.cache/troupe-test, by package.
var npmDirs = map[string]string{
	"mcp-server-everything": "mcp-servers-2026.8.31",
	"mcp-server-filesystem": "mcp-servers-2026.8.31",
	"conformance":           "mcp-conformance-0.1.10-sdk1.25.2",
}

// NPMBin returns the path of an npm binary .ci/run installs (the reference
// servers mcp-server-everything and mcp-server-filesystem, and the
// conformance suite's conformance), skipping the test when
// it is not installed, and failing it instead on CI (CI=true), where
// .ci/run installs it.
func NPMBin(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv(NPMServersEnv)
	if name == "conformance" {
		dir = os.Getenv(ConformanceEnv)
	}
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skip("no user cache folder: " + err.Error())
		}
		dir = filepath.Join(cache, "troupe-test", npmDirs[name], "node_modules")
	}
	bin := filepath.Join(dir, ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		msg := "the npm MCP server " + name + " is not installed at " + bin + " (bash .ci/run installs it; or set $" + NPMServersEnv + ")"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}
