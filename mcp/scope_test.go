package mcp_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/mcp"
)

// TestScopes: add a server in two scopes, find it in both, remove it from
// one; an unknown scope and a malformed file are errors naming them.
func TestScopes(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	if _, err := mcp.ScopePath("team", cwd, home); !errors.Is(err, mcp.ErrBadScope) || !strings.Contains(err.Error(), `"team"`) {
		t.Errorf("ScopePath(team) = %v; want ErrBadScope naming it", err)
	}
	if got, err := mcp.ScopesOf("a", cwd, home, mcp.Scopes); err != nil || len(got) != 0 {
		t.Errorf("ScopesOf with no files = %v, %v; want none", got, err)
	}
	for _, sc := range []string{"local", "user"} {
		path, err := mcp.ScopePath(sc, cwd, home)
		if err != nil {
			t.Fatal(err)
		}
		if err := mcp.AddServer(t.Context(), path, mcp.Server{Name: "a", Command: "x"}); err != nil {
			t.Fatalf("AddServer(%s): %v", path, err)
		}
	}
	if got, err := mcp.ScopesOf("a", cwd, home, mcp.Scopes); err != nil || !cmp.Equal(got, []string{"local", "user"}) {
		t.Errorf("ScopesOf(a) = %v, %v; want local and user", got, err)
	}
	user, _ := mcp.ScopePath("user", cwd, home)
	if err := mcp.RemoveServer(t.Context(), user, "a"); err != nil {
		t.Fatal(err)
	}
	if got, err := mcp.ScopesOf("a", cwd, home, mcp.Scopes); err != nil || !cmp.Equal(got, []string{"local"}) {
		t.Errorf("ScopesOf(a) after removing it from user = %v, %v; want local", got, err)
	}
	project := filepath.Join(cwd, ".mcp.json")
	if err := os.WriteFile(project, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mcp.ScopesOf("a", cwd, home, mcp.Scopes); !errors.Is(err, mcp.ErrBadConfig) || !strings.Contains(err.Error(), project) {
		t.Errorf("ScopesOf with a malformed .mcp.json = %v; want ErrBadConfig naming it", err)
	}
}

func TestServerArgs(t *testing.T) {
	tests := []struct {
		name string
		a    mcp.ServerArgs
		want mcp.Server
		err  string
	}{
		{name: "stdio", a: mcp.ServerArgs{Transport: "stdio", Args: []string{"gh", "--", "npx", "-y", "x"}, Env: []string{"K=v=w"}},
			want: mcp.Server{Name: "gh", Command: "npx", Args: []string{"-y", "x"}, Env: map[string]string{"K": "v=w"}, Source: "f"}},
		{name: "http", a: mcp.ServerArgs{Transport: "http", Args: []string{"t", "https://x/mcp"}, Headers: []string{" Authorization :  Bearer y "}},
			want: mcp.Server{Name: "t", Type: "http", URL: "https://x/mcp", Headers: map[string]string{"Authorization": "Bearer y"}, Source: "f"}},
		{name: "no command", a: mcp.ServerArgs{Transport: "stdio", Args: []string{"gh", "--"}}, err: "needs NAME and a command"},
		{name: "header on stdio", a: mcp.ServerArgs{Transport: "stdio", Args: []string{"gh", "x"}, Headers: []string{"A: b"}}, err: "--header is for http"},
		{name: "args after url", a: mcp.ServerArgs{Transport: "sse", Args: []string{"t", "http://x", "y"}}, err: "url only"},
		{name: "env on http", a: mcp.ServerArgs{Transport: "http", Args: []string{"t", "http://x"}, Env: []string{"K=v"}}, err: "no --env"},
		{name: "bad transport", a: mcp.ServerArgs{Transport: "ws", Args: []string{"t", "ws://x"}}, err: `--transport "ws"`},
		{name: "bad env", a: mcp.ServerArgs{Transport: "stdio", Args: []string{"gh", "x"}, Env: []string{"=v"}}, err: `--env "=v"`},
		{name: "bad header", a: mcp.ServerArgs{Transport: "http", Args: []string{"t", "http://x"}, Headers: []string{"nocolon"}}, err: `--header "nocolon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.a.Server("f")
			if tt.err != "" {
				if _, ok := errors.AsType[*mcp.ArgError](err); !ok || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Server(%+v) = %v; want an ArgError containing %q", tt.a, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Server(%+v) diff (-want +got):\n%s", tt.a, d)
			}
		})
	}
}

func TestEnvOptions(t *testing.T) {
	env := map[string]string{"MCP_TIMEOUT": "1500", "MCP_TOOL_TIMEOUT": " 20 ", "TOKEN": "t"}
	opts, err := mcp.EnvOptions("/w", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if opts.Dir != "/w" || opts.StartTimeout != 1500*time.Millisecond || opts.CallTimeout != 20*time.Millisecond {
		t.Errorf("EnvOptions = dir %q, start %v, call %v; want /w, 1.5s, 20ms", opts.Dir, opts.StartTimeout, opts.CallTimeout)
	}
	if v, ok := opts.Lookup("TOKEN"); !ok || v != "t" {
		t.Errorf("Lookup(TOKEN) = %q, %v; want t from getenv", v, ok)
	}
	for _, bad := range []string{"0", "-5", "1s"} {
		env["MCP_TOOL_TIMEOUT"] = bad
		if _, err := mcp.EnvOptions("", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "MCP_TOOL_TIMEOUT") {
			t.Errorf("EnvOptions with MCP_TOOL_TIMEOUT=%s = %v; want an error naming it", bad, err)
		}
	}
}

// TestCheck starts a configured server that cannot run and reports it
// failed, with the command in its status line; Report lists it.
func TestCheck(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"gone": {"command": "/nonexistent/troupe-mcp"}, "other": {"command": "x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sts, _, err := mcp.Check(t.Context(), mcp.Sources{Flags: []string{cfg}, Strict: true}, mcp.Options{StartTimeout: 5 * time.Second}, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 1 || sts[0].State != mcp.StateFailed || sts[0].Err == nil {
		t.Fatalf("Check(gone) = %+v; want one failed server", sts)
	}
	if line := sts[0].String(); line != "gone: /nonexistent/troupe-mcp (stdio) - failed" {
		t.Errorf("String() = %q", line)
	}
	r := mcp.Report(sts)
	if !strings.HasPrefix(r, "MCP servers:\ngone: ") || !strings.Contains(r, "\n  ") {
		t.Errorf("Report = %q; want the server and its error indented", r)
	}
	if r := mcp.Report(nil); !strings.Contains(r, "No MCP servers") {
		t.Errorf("Report(nil) = %q", r)
	}
}
