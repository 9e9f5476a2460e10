package llmtest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// WebSearchToolType is the type of the Messages API's server-side web
// search tool, as a request names it.
const WebSearchToolType = "web_search_20250305"

// AnthropicSearchHit is one result of the fake server's web search.
type AnthropicSearchHit struct {
	Title   string
	URL     string
	PageAge string
}

// AnthropicServerToolUseBlock returns a server_tool_use block: the model
// calling a tool the API runs itself (name "web_search"), streamed as a
// tool_use block is.
func AnthropicServerToolUseBlock(id, name, inputJSON string) AnthropicBlock {
	return AnthropicBlock{Type: "server_tool_use", ID: id, Name: name, Input: json.RawMessage(inputJSON)}
}

// AnthropicWebSearchResultBlock returns a web_search_tool_result block
// holding hits, as the API sends it: whole in its content_block_start,
// each hit with an encrypted_content the client cannot read.
func AnthropicWebSearchResultBlock(toolUseID string, hits ...AnthropicSearchHit) AnthropicBlock {
	content := make([]map[string]string, 0, len(hits))
	for i, h := range hits {
		content = append(content, map[string]string{"type": "web_search_result", "title": h.Title, "url": h.URL,
			"page_age": h.PageAge, "encrypted_content": fmt.Sprintf("llmtest-encrypted-%d", i)})
	}
	raw, _ := json.Marshal(content)
	return AnthropicBlock{Type: "web_search_tool_result", ToolUseID: toolUseID, Content: raw}
}

// AnthropicWebSearchErrorBlock returns a web_search_tool_result block
// reporting the error code (such as "max_uses_exceeded" or
// "too_many_requests").
func AnthropicWebSearchErrorBlock(toolUseID, code string) AnthropicBlock {
	raw, _ := json.Marshal(map[string]string{"type": "web_search_tool_result_error", "error_code": code})
	return AnthropicBlock{Type: "web_search_tool_result", ToolUseID: toolUseID, Content: raw}
}

// WebSearchTool returns the request's server-side web search tool, if
// it has one.
func (r AnthropicRequest) WebSearchTool() (AnthropicTool, bool) {
	i := slices.IndexFunc(r.Tools, func(t AnthropicTool) bool { return t.Type == WebSearchToolType })
	if i < 0 {
		return AnthropicTool{}, false
	}
	return r.Tools[i], true
}

// AnthropicWebSearch returns a handler that emulates the API's web
// search: when a request offers the web search tool, the reply searches
// once for the last user message's text (a server_tool_use block), finds
// the hits of corpus whose host the tool's allowed_domains and
// blocked_domains let through (a domain covers its subdomains), returns
// them in a web_search_tool_result block and ends with a text block
// answer(query, hits). A request without the tool gets answer's text with
// no search.
func AnthropicWebSearch(corpus []AnthropicSearchHit, answer func(query string, hits []AnthropicSearchHit) string) AnthropicHandler {
	return func(req *AnthropicRequest) AnthropicReply {
		query := req.LastMessage().textOf()
		ws, ok := req.WebSearchTool()
		if !ok {
			return AnthropicText(answer(query, nil))
		}
		var hits []AnthropicSearchHit
		for _, h := range corpus {
			if searchAdmits(ws, h.URL) {
				hits = append(hits, h)
			}
		}
		in, _ := json.Marshal(map[string]string{"query": query})
		id := "srvtoolu_fake_1"
		return AnthropicContent(AnthropicServerToolUseBlock(id, "web_search", string(in)),
			AnthropicWebSearchResultBlock(id, hits...), AnthropicTextBlock(answer(query, hits)))
	}
}

// textOf returns the concatenated text blocks of m.
func (m AnthropicMessage) textOf() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// searchAdmits reports whether the web search tool t lets a hit at raw
// through.
func searchAdmits(t AnthropicTool, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	under := func(domains []string) bool {
		return slices.ContainsFunc(domains, func(d string) bool {
			d = strings.ToLower(d)
			return host == d || strings.HasSuffix(host, "."+d)
		})
	}
	if len(t.AllowedDomains) > 0 && !under(t.AllowedDomains) {
		return false
	}
	return !under(t.BlockedDomains)
}

// anthValidateTool checks a tool definition as the API does, in part,
// and returns the message's tail, or "".
func anthValidateTool(t AnthropicTool) string {
	switch t.Type {
	case WebSearchToolType:
		if t.Name != "web_search" {
			return fmt.Sprintf("name: Input should be 'web_search', got %q", t.Name)
		}
		if len(t.AllowedDomains) > 0 && len(t.BlockedDomains) > 0 {
			return "Cannot specify both allowed_domains and blocked_domains"
		}
	case "", "custom":
		if t.Name == "" {
			return "name: field required"
		}
	}
	return ""
}
