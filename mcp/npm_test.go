package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/mcp/mcptest"
)

func npmBin(t testing.TB, name string) string { return mcptest.NPMBin(t, name) }

// TestNPMServers drives the reference servers @modelcontextprotocol/
// server-everything and server-filesystem over stdio.
func TestNPMServers(t *testing.T) {
	everything, filesystem := npmBin(t, "mcp-server-everything"), npmBin(t, "mcp-server-filesystem")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("alpha beta"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := start(t, []mcp.Server{
		{Name: "everything", Command: everything, Args: []string{"stdio"}},
		{Name: "fs", Command: filesystem, Args: []string{root}},
	}, mcp.Options{StartTimeout: 30 * time.Second})
	for _, st := range m.Status() {
		if st.State != mcp.StateConnected {
			t.Fatalf("%s: %v", st.Name, st.Err)
		}
	}
	tools := m.Tools()
	if res := call(t, tools, "mcp__everything__echo", `{"message":"hello npm"}`); res.IsError || !strings.Contains(res.Content, "hello npm") {
		t.Errorf("everything echo = %+v", res)
	}
	if res := call(t, tools, "mcp__fs__read_text_file", `{"path":"`+filepath.Join(root, "notes.txt")+`"}`); res.IsError || !strings.Contains(res.Content, "alpha beta") {
		t.Errorf("fs read_text_file = %+v", res)
	}
	if res := call(t, tools, "mcp__fs__read_text_file", `{"path":"/etc/passwd"}`); !res.IsError {
		t.Errorf("fs read outside its root = %+v; want an error result", res)
	}
	if res := call(t, tools, mcp.ListResourcesName, `{"server":"everything"}`); res.IsError || !strings.Contains(res.Content, "server everything:") {
		t.Errorf("ListMcpResources = %.300q", res.Content)
	}
}
