package mcp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/mcp"
)

// The project's committed settings never approve its .mcp.json servers;
// a local or user settings file does. In a folder that is not trusted,
// the project's settings start no server and approve nothing, and
// .mcp.json starts nothing even when the user approved it; Check lists
// the held servers without starting them.
func TestLoadTrust(t *testing.T) {
	d := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	user := write("user.json", `{"mcpServers":{"mine":{"command":"x"}}}`)
	committed := write("committed.json", `{"enableAllProjectMcpServers":true,"enabledMcpjsonServers":["theirs"],"mcpServers":{"setsrv":{"command":"s"}}}`)
	local := write("local.json", `{"enabledMcpjsonServers":["theirs"]}`)
	proj := write(".mcp.json", `{"mcpServers":{"theirs":{"command":"y"}}}`)
	names := func(src mcp.Sources) ([]string, string) {
		t.Helper()
		servers, warnings, err := mcp.Load(src)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range servers {
			out = append(out, s.Name)
		}
		slices.Sort(out)
		return out, strings.Join(warnings, "\n")
	}
	tests := []struct {
		name     string
		src      mcp.Sources
		want     []string
		warnings []string
	}{
		{"trusted, committed approvals", mcp.Sources{Settings: []string{user, committed}, NoApprovals: []string{committed}, Project: proj},
			[]string{"mine", "setsrv"}, []string{"enableAllProjectMcpServers and enabledMcpjsonServers ignored: it comes with the repository", `"theirs"`}},
		{"trusted, local approval", mcp.Sources{Settings: []string{user, committed, local}, NoApprovals: []string{committed}, Project: proj},
			[]string{"mine", "setsrv", "theirs"}, nil},
		{"untrusted", mcp.Sources{Settings: []string{user, committed, local}, NoApprovals: []string{committed}, Untrusted: []string{committed, local}, Project: proj, ProjectUntrusted: true},
			[]string{"mine"}, []string{`MCP server "setsrv" of ` + committed + " is not started: the folder is not trusted", `MCP server "theirs" of ` + proj + " is not started: the folder is not trusted"}},
		{"untrusted, user approval", mcp.Sources{Settings: []string{write("approving-user.json", `{"enableAllProjectMcpServers":true}`)}, Project: proj, ProjectUntrusted: true},
			nil, []string{"the folder is not trusted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := names(tt.src)
			if !slices.Equal(got, tt.want) {
				t.Errorf("servers %v; want %v (warnings %s)", got, tt.want, warnings)
			}
			for _, w := range tt.warnings {
				if !strings.Contains(warnings, w) {
					t.Errorf("warnings lack %q:\n%s", w, warnings)
				}
			}
		})
	}
	sts, _, err := mcp.Check(t.Context(), tests[2].src, mcp.Options{}, "theirs")
	if err != nil || len(sts) != 1 || sts[0].State != mcp.StateUntrusted || sts[0].Target != "y" {
		t.Errorf("Check(theirs) = %+v, %v; want it listed, not started", sts, err)
	}
}
