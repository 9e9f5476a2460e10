package llmtest

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestAnthropicWebSearchToolValidated: the fake refuses what the API
// refuses in a web search tool definition.
func TestAnthropicWebSearchToolValidated(t *testing.T) {
	srv := NewAnthropicServer(t, nil)
	tests := []struct {
		name, tool string
		status     int
		msg        string
	}{
		{"ok", `{"type":"web_search_20250305","name":"web_search","allowed_domains":["go.dev"]}`, 200, ""},
		{"both lists", `{"type":"web_search_20250305","name":"web_search","allowed_domains":["a"],"blocked_domains":["b"]}`, 400, "Cannot specify both"},
		{"wrong name", `{"type":"web_search_20250305","name":"search"}`, 400, "web_search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"q"}],"tools":[` + tt.tool + `]}`
			req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/v1/messages", bytes.NewBufferString(body))
			req.Header.Set("X-Api-Key", "k")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(b.String(), tt.msg) {
				t.Errorf("status %d body %s; want %d with %q", resp.StatusCode, b.String(), tt.status, tt.msg)
			}
		})
	}
}

func TestSearchAdmits(t *testing.T) {
	tests := []struct {
		allowed, blocked []string
		url              string
		want             bool
	}{
		{nil, nil, "https://a.example/x", true},
		{[]string{"example"}, nil, "https://a.example/x", true},
		{[]string{"a.example"}, nil, "https://b.example/x", false},
		{nil, []string{"example"}, "https://a.example/x", false},
		{nil, []string{"ample"}, "https://a.example/x", true},
		{nil, nil, "://bad", false},
	}
	for _, tt := range tests {
		got := searchAdmits(AnthropicTool{AllowedDomains: tt.allowed, BlockedDomains: tt.blocked}, tt.url)
		if got != tt.want {
			t.Errorf("searchAdmits(%v, %v, %q) = %v; want %v", tt.allowed, tt.blocked, tt.url, got, tt.want)
		}
	}
}
