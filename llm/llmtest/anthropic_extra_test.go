package llmtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestAnthropicCountTokens checks count_tokens is answered without
// consuming a scripted reply, and validated like a message request.
func TestAnthropicCountTokens(t *testing.T) {
	s := NewAnthropicServer(t, AnthropicScript(AnthropicText("after")))
	body := `{"model":"m","messages":[{"role":"user","content":"count me"},{"role":"system","content":"env"}]}`
	resp := anthPostPath(t, s, "/v1/messages/count_tokens?beta=true", "k", body)
	var got struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || got.InputTokens != len(body)/4 {
		t.Errorf("count_tokens = %d, input_tokens %d; want 200, %d", resp.StatusCode, got.InputTokens, len(body)/4)
	}
	bad := anthPostPath(t, s, "/v1/messages/count_tokens", "k", `{"messages":[]}`)
	if bad.StatusCode != 400 {
		t.Errorf("count_tokens without model = %d; want 400", bad.StatusCode)
	}
	counts := s.CountTokensRequests()
	if len(counts) != 1 || counts[0].Query.Get("beta") != "true" || counts[0].Messages[1].Role != "system" {
		t.Errorf("CountTokensRequests() = %+v; want the one valid request", counts)
	}
	if n := s.RequestCount(); n != 0 {
		t.Errorf("RequestCount() = %d after count_tokens; want 0", n)
	}
	// The script was not consumed: the first message request gets its reply.
	msg := anthPostPath(t, s, "/v1/messages", "k", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`)
	var m struct{ Content []struct{ Text string } }
	json.NewDecoder(msg.Body).Decode(&m)
	if len(m.Content) != 1 || m.Content[0].Text != "after" {
		t.Errorf("message after count_tokens = %+v; want the scripted text", m)
	}
}

// TestAnthropicUnknownPaths checks an unserved path is recorded with its
// method and query.
func TestAnthropicUnknownPaths(t *testing.T) {
	s := NewAnthropicServer(t, nil)
	anthPostPath(t, s, "/v1/models?limit=1", "k", `{}`)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodHead, s.URL+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := []string{"POST /v1/models?limit=1", "HEAD /"}
	if got := s.UnknownPaths(); !slices.Equal(got, want) {
		t.Errorf("UnknownPaths() = %q; want %q", got, want)
	}
}

func anthPostPath(t *testing.T, s *AnthropicServer, path, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
