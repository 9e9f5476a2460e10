package brief

import (
	"slices"
	"testing"
)

// ToolList reads allowed-tools in each way Claude Code's files write it.
func TestToolList(t *testing.T) {
	for in, want := range map[string][]string{
		"Read Grep Glob":                        {"Read", "Grep", "Glob"},
		"Read, Grep":                            {"Read", "Grep"},
		"Read Bash(git diff *) Bash(npm run:*)": {"Read", "Bash(git diff *)", "Bash(npm run:*)"},
		"  Edit(/src/**) ,mcp__x__y ":           {"Edit(/src/**)", "mcp__x__y"},
		"":                                      nil,
		"Bash(a (b) c) Read":                    {"Bash(a (b) c)", "Read"},
	} {
		if got := ToolList([]string{in}); !slices.Equal(got, want) {
			t.Errorf("ToolList(%q) = %q; want %q", in, got, want)
		}
	}
	if got := ToolList([]string{"Read", "Bash(git log *)"}); !slices.Equal(got, []string{"Read", "Bash(git log *)"}) {
		t.Errorf("ToolList of a YAML list = %q", got)
	}
}
