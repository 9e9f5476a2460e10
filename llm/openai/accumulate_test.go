package openai

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"

	"github.com/troupe-dev/troupe/llm"
)

// accumulate feeds wire chunks (the JSON of each choice-0 delta, with an
// optional finish reason after a "|") to an accumulator.
func accumulate(t *testing.T, deltas ...string) ([]llm.Event, *llm.Response, error) {
	t.Helper()
	a := newAccumulator()
	var evs []llm.Event
	for _, d := range deltas {
		var c openai.ChatCompletionChunk
		raw := `{"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + d + `}]}`
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
		evs = append(evs, a.add(c)...)
	}
	a.finish = "tool_calls"
	end, resp, err := a.done("m")
	return append(evs, end...), resp, err
}

func TestAccumulatorToolCallShapes(t *testing.T) {
	tests := []struct {
		name   string
		deltas []string
		want   []llm.Block
		starts []llm.Block // EventToolStart blocks
	}{
		{
			name: "every call at index 0, each whole (Ollama)",
			deltas: []string{
				`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}`,
				`{"tool_calls":[{"index":0,"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}`,
			},
			want: []llm.Block{
				llm.ToolUse("a", "f", json.RawMessage(`{"x":1}`)),
				llm.ToolUse("b", "g", json.RawMessage(`{}`)),
			},
			starts: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "a", Name: "f"}, {Type: llm.BlockToolUse, ToolUseID: "b", Name: "g"}},
		},
		{
			name: "id and name repeated in every chunk",
			deltas: []string{
				`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\""}}]}`,
				`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":":2}"}}]}`,
			},
			want:   []llm.Block{llm.ToolUse("a", "f", json.RawMessage(`{"x":2}`))},
			starts: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "a", Name: "f"}},
		},
		{
			name: "no id, name after the first arguments",
			deltas: []string{
				`{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}`,
				`{"tool_calls":[{"index":0,"function":{"name":"search","arguments":"\"go\"}"}}]}`,
			},
			want:   []llm.Block{llm.ToolUse("call_0", "search", json.RawMessage(`{"q":"go"}`))},
			starts: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "call_0", Name: "search"}},
		},
		{
			name: "text around a call",
			deltas: []string{
				`{"content":"Let me look."}`,
				`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}]}`,
				`{"content":" Then more."}`,
			},
			want:   []llm.Block{llm.Text("Let me look."), llm.ToolUse("a", "f", json.RawMessage(`{}`)), llm.Text(" Then more.")},
			starts: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "a", Name: "f"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, resp, err := accumulate(t, tt.deltas...)
			if err != nil {
				t.Fatalf("done error: %v", err)
			}
			if diff := cmp.Diff(tt.want, resp.Message.Content); diff != "" {
				t.Errorf("content mismatch (-want +got):\n%s", diff)
			}
			var starts []llm.Block
			inputs := map[int]string{}
			stops := 0
			for _, ev := range evs {
				switch ev.Type {
				case llm.EventToolStart:
					starts = append(starts, *ev.Block)
				case llm.EventToolInput:
					inputs[ev.Index] += ev.Text
				case llm.EventBlockStop:
					stops++
				}
			}
			if diff := cmp.Diff(tt.starts, starts); diff != "" {
				t.Errorf("tool starts mismatch (-want +got):\n%s", diff)
			}
			for i, b := range tt.want {
				if b.Type == llm.BlockToolUse && string(b.Input) != "{}" && inputs[i] != string(b.Input) {
					t.Errorf("tool %d input deltas = %q; want %s", i, inputs[i], b.Input)
				}
			}
			if stops != len(tt.want) {
				t.Errorf("block stops = %d; want %d", stops, len(tt.want))
			}
		})
	}
}

func TestToolInput(t *testing.T) {
	tests := []struct {
		args, want string
		ok         bool
	}{
		{"", "{}", true},
		{"  \n", "{}", true},
		{` {"a":1} `, `{"a":1}`, true},
		{`{"a":`, "", false},
		{`null`, "", false},
		{`"x"`, "", false},
		{`[1]`, "", false},
	}
	for _, tt := range tests {
		got, err := toolInput(tt.args)
		if (err == nil) != tt.ok || string(got) != tt.want {
			t.Errorf("toolInput(%q) = %s, %v; want %s, ok %v", tt.args, got, err, tt.want, tt.ok)
		}
	}
}

func TestErrorBody(t *testing.T) {
	tests := []struct {
		body, typ, code, msg string
	}{
		{`{"error":{"message":"m","type":"t","code":"c","param":null}}`, "t", "c", "m"},
		{`{"error":{"message":"m","type":"t","code":null}}`, "t", "", "m"},
		{`{"error":{"message":"m","code":503}}`, "", "503", "m"},
		{`{"error":"model not found"}`, "", "", "model not found"},
		{`{"detail":[{"loc":["body"],"msg":"field required"}]}`, "", "", `[{"loc":["body"],"msg":"field required"}]`},
		{`upstream timeout`, "", "", "upstream timeout"},
	}
	for _, tt := range tests {
		typ, code, msg := errorBody([]byte(tt.body))
		if typ != tt.typ || code != tt.code || msg != tt.msg {
			t.Errorf("errorBody(%s) = %q, %q, %q; want %q, %q, %q", tt.body, typ, code, msg, tt.typ, tt.code, tt.msg)
		}
	}
}
