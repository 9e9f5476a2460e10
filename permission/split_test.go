package permission

import (
	"slices"
	"testing"
)

func TestSplitRules(t *testing.T) {
	got := SplitRules(` Bash(npm run test:*), Edit  Read(./src/**),Bash(git log --oneline) WebFetch(domain:a.com)`)
	want := []string{"Bash(npm run test:*)", "Edit", "Read(./src/**)", "Bash(git log --oneline)", "WebFetch(domain:a.com)"}
	if !slices.Equal(got, want) {
		t.Errorf("SplitRules = %q; want %q", got, want)
	}
}
