package approve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
)

func TestHeadlessHint(t *testing.T) {
	cwd := "/work/proj"
	p := permission.Policy{Shell: shell.Parse}
	hint := HeadlessHint(p, cwd, nil)
	tests := []struct {
		tool, input string
		want        []string
	}{
		{"Write", `{"file_path":"a.go"}`, []string{"--permission-mode acceptEdits"}},
		{"Write", `{"file_path":"/etc/x.conf"}`, []string{"--add-dir /etc --permission-mode acceptEdits"}},
		{"Read", `{"file_path":"/srv/lib/x.go"}`, []string{"--add-dir /srv/lib"}},
		{"Bash", `{"command":"npm test && rm -rf 'my build'"}`, []string{`--allowedTools "Bash(npm test) Bash(rm -rf 'my build')"`}},
		{"Bash", `{"command":"echo $(whoami)"}`, []string{"--permission-mode bypassPermissions"}},
		{"WebFetch", `{"url":"https://Example.com/x"}`, []string{`--allowedTools "WebFetch(domain:example.com)"`}},
		{"mcp__gh__create_issue", `{}`, []string{`--allowedTools "mcp__gh__create_issue"`}},
	}
	for _, tt := range tests {
		d := p.Check(permission.Request{Tool: tt.tool, Input: json.RawMessage(tt.input), Cwd: cwd})
		if d.Behavior != permission.Ask {
			t.Fatalf("%s %s: decision %s; want ask", tt.tool, tt.input, d.Behavior)
		}
		got := hint(AskRequest{Tool: tt.tool, Input: json.RawMessage(tt.input), Cwd: cwd, Mode: permission.ModeDefault, Reason: d.Reason})
		for _, w := range append(tt.want, "--permission-prompt-command") {
			if !strings.Contains(got, w) {
				t.Errorf("%s %s: hint %q does not contain %q", tt.tool, tt.input, got, w)
			}
		}
	}
}
