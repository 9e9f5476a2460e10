package llmtest

import (
	"encoding/json"
	"testing"
)

// FuzzAnthropicDecodeRequest feeds request bodies to the fake server's
// decoder and validator: neither may panic, and a body they accept has
// only the roles and block shapes the server promises its handlers.
func FuzzAnthropicDecodeRequest(f *testing.F) {
	// The shape Claude Code 2.1.328 sends (docs/protocol.md section 14), with
	// our own text: system blocks with cache_control, a mid-conversation
	// system message, thinking and context management, a tool round trip.
	f.Add([]byte(`{"model":"claude-opus-5-5","max_tokens":128000,"stream":true,
"thinking":{"type":"adaptive","display":"omitted"},"output_config":{"effort":"medium"},
"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},
"metadata":{"user_id":"{\"device_id\":\"d\",\"account_uuid\":\"\",\"session_id\":\"s\"}"},
"system":[{"type":"text","text":"billing line"},{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}],
"tools":[{"name":"Write","input_schema":{"type":"object"}},{"name":"DeferredToolPlaceholder","defer_loading":true}],
"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>r</system-reminder>"},{"type":"text","text":"say hi"}]},
{"role":"system","content":"# Environment"},
{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"/x","content":"y"}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","cache_control":{"type":"ephemeral"}}]}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"image"}]}]}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUg=="}}]}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"tool","content":[{}]}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := anthDecodeRequest(body)
		if err != nil || anthValidate(req) != "" {
			return
		}
		for i, m := range req.Messages {
			switch m.Role {
			case "user", "assistant", "system":
			default:
				t.Fatalf("accepted message %d with role %q", i, m.Role)
			}
			for j, b := range m.Content {
				if b.Type == "" {
					t.Fatalf("accepted message %d block %d without a type", i, j)
				}
				if b.Type == "tool_use" && !json.Valid(b.Input) {
					t.Fatalf("accepted tool_use %d.%d with input %q", i, j, b.Input)
				}
			}
		}
		if n := len(req.CacheBreakpoints()); n > 4 {
			t.Fatalf("accepted %d cache breakpoints", n)
		}
	})
}
