package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// generatedAreas and generatedVerbs make the names of GeneratedHTTP's
// tools: verb_area (create_issue, list_invoices, ...).
var (
	generatedAreas = []string{"issue", "pull_request", "invoice", "customer", "deployment", "dashboard", "alert", "ticket",
		"channel", "message", "calendar_event", "document", "spreadsheet", "bucket", "database", "user", "team", "webhook",
		"pipeline", "release", "secret", "incident", "metric", "report", "project"}
	generatedVerbs = []string{"create", "get", "list", "update", "delete", "search", "archive", "export"}
)

// GeneratedHTTP serves n tools (up to 200) over streamable HTTP, shaped
// like a real integration server's: names such as create_issue, a
// sentence of description, and input schemas of three to seven described
// properties (strings, enums, integers, arrays, nested objects). A call
// answers "<name> ok: <arguments>". It returns the server's URL.
func GeneratedHTTP(t testing.TB, n int) string {
	t.Helper()
	if max := len(generatedAreas) * len(generatedVerbs); n > max {
		t.Fatalf("GeneratedHTTP: at most %d tools, not %d", max, n)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "generated", Version: "1"}, nil)
	for i := range n {
		name, desc, schema := GeneratedTool(i)
		var in any
		_ = json.Unmarshal(schema, &in)
		s.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: in},
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " ok: " + string(req.Params.Arguments)}}}, nil
			})
	}
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// GeneratedTool returns the name, description and input schema of
// GeneratedHTTP's tool i.
func GeneratedTool(i int) (name, desc string, schema json.RawMessage) {
	verb, area := generatedVerbs[i%len(generatedVerbs)], generatedAreas[i/len(generatedVerbs)]
	noun := strings.ReplaceAll(area, "_", " ")
	name = verb + "_" + area
	desc = fmt.Sprintf("%s a %s in the workspace. Returns the %s as JSON with its id, status, owner and timestamps; fails when the caller lacks access to the workspace.",
		strings.ToUpper(verb[:1])+verb[1:], noun, noun)
	props := map[string]any{
		"workspace_id": map[string]any{"type": "string", "description": "The workspace that holds the " + noun + "."},
		area + "_id":   map[string]any{"type": "string", "description": "The id of the " + noun + ", as returned by list_" + area + "."},
		"fields":       map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Which fields of the " + noun + " to return; all when omitted."},
	}
	required := []string{"workspace_id"}
	switch verb {
	case "create", "update":
		props["title"] = map[string]any{"type": "string", "maxLength": 256, "description": "A short title for the " + noun + "."}
		props["body"] = map[string]any{"type": "string", "description": "The " + noun + "'s text, in Markdown."}
		props["labels"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Labels to set."}
		props["visibility"] = map[string]any{"type": "string", "enum": []string{"private", "team", "public"}, "description": "Who can see it."}
		required = append(required, "title")
	case "list", "search", "export":
		props["query"] = map[string]any{"type": "string", "description": "Text to match in the " + noun + "'s title and body."}
		props["page"] = map[string]any{"type": "integer", "minimum": 1, "description": "The page of results, from 1."}
		props["per_page"] = map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "description": "Results per page (default 30)."}
		props["sort"] = map[string]any{"type": "object", "properties": map[string]any{
			"by":    map[string]any{"type": "string", "enum": []string{"created", "updated", "name"}},
			"order": map[string]any{"type": "string", "enum": []string{"asc", "desc"}}}, "description": "How to order the results."}
	default:
		required = append(required, area+"_id")
	}
	schema, _ = json.Marshal(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
	return name, desc, schema
}
