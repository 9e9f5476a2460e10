package tui

import (
	"encoding/json"
	"testing"
)

func TestToolSummaryWeb(t *testing.T) {
	tests := []struct{ name, input, want string }{
		{"WebFetch", `{"url":"https://go.dev/doc","prompt":"what changed?"}`, "WebFetch(https://go.dev/doc)"},
		{"WebSearch", `{"query":"go 1.26 release notes","allowed_domains":["go.dev"]}`, "WebSearch(go 1.26 release notes)"},
	}
	for _, tt := range tests {
		if got := toolSummary(tt.name, json.RawMessage(tt.input)); got != tt.want {
			t.Errorf("toolSummary(%s, %s) = %q; want %q", tt.name, tt.input, got, tt.want)
		}
	}
}
