package mcp_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/mcp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, err string
		want          []mcp.Server
	}{
		{name: "stdio", in: `{"mcpServers": {"a": {"command": "npx", "args": ["-y", "x"], "env": {"K": "v"}}}}`,
			want: []mcp.Server{{Name: "a", Command: "npx", Args: []string{"-y", "x"}, Env: map[string]string{"K": "v"}, Source: "f"}}},
		{name: "http and sse", in: `{"mcpServers": {"h": {"type": "http", "url": "https://x/mcp", "headers": {"A": "b"}}, "s": {"type": "sse", "url": "http://x/sse"}}}`,
			want: []mcp.Server{{Name: "h", Type: "http", URL: "https://x/mcp", Headers: map[string]string{"A": "b"}, Source: "f"}, {Name: "s", Type: "sse", URL: "http://x/sse", Source: "f"}}},
		{name: "other keys", in: `{"permissions": {}, "mcpServers": {}}`},
		{name: "not json", in: `{`, err: "f: not a JSON object"},
		{name: "unknown field", in: `{"mcpServers": {"a": {"command": "x", "cmd": "y"}}}`, err: `server "a": json: unknown field "cmd"`},
		{name: "no command", in: `{"mcpServers": {"a": {"args": ["x"]}}}`, err: "needs a command"},
		{name: "bad type", in: `{"mcpServers": {"a": {"type": "ws", "url": "ws://x"}}}`, err: `unknown type "ws"`},
		{name: "http without url", in: `{"mcpServers": {"a": {"type": "http"}}}`, err: "needs a url"},
		{name: "http with command", in: `{"mcpServers": {"a": {"type": "http", "url": "http://x", "command": "y"}}}`, err: "not a command"},
		{name: "bad url", in: `{"mcpServers": {"a": {"type": "http", "url": "file:///x"}}}`, err: "not http(s)"},
		{name: "bad name", in: `{"mcpServers": {"a b": {"command": "x"}}}`, err: "invalid character"},
		{name: "stdio with oauth", in: `{"mcpServers": {"a": {"command": "x", "oauth": {}}}}`, err: "no url, headers, headersHelper or oauth"},
		{name: "double underscore", in: `{"mcpServers": {"a__b": {"command": "x"}}}`, err: "double underscore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.Parse([]byte(tt.in), "f")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, mcp.ErrBadConfig) {
					t.Fatalf("Parse(%s) error = %v; want ErrBadConfig containing %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%s) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"HOME": "/h", "TOKEN": "t0k", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s := mcp.Server{Name: "a", Command: "${HOME}/bin/x", Args: []string{"--port=${PORT:-8080}", "${EMPTY:-d}", "$HOME", "${not valid}", "${unclosed"},
		Env: map[string]string{"K": "${TOKEN}"}}
	got, err := s.Expand(lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := mcp.Server{Name: "a", Command: "/h/bin/x", Args: []string{"--port=8080", "", "$HOME", "${not valid}", "${unclosed"}, Env: map[string]string{"K": "t0k"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Expand mismatch (-want +got):\n%s", diff)
	}
	h := mcp.Server{Name: "h", Type: "http", URL: "${BASE:-https://api}/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X": "${A}${B}"}, Source: ".mcp.json"}
	_, err = h.Expand(lookup)
	if err == nil || !strings.Contains(err.Error(), "A, B") || !strings.Contains(err.Error(), ".mcp.json") {
		t.Errorf("Expand with unset variables: %v; want an error naming A, B and the file", err)
	}
	if s.Args[0] != "--port=${PORT:-8080}" {
		t.Errorf("Expand changed its receiver's args: %q", s.Args)
	}
}

// FuzzParse: any input gives servers that pass Check and expand without
// panicking, or an ErrBadConfig.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"a": {"command": "npx", "args": ["-y", "${X:-y}"], "env": {"K": "${K}"}}}}`,
		`{"mcpServers": {"h": {"type": "http", "url": "https://${HOST:-x}/mcp", "headers": {"A": "${T}"}}}}`,
		`{"mcpServers": {"s": {"type": "sse", "url": "http://x/sse"}}}`,
		`{"mcpServers": {"a b": {}}}`, `[]`, `{"mcpServers": null}`, `{"mcpServers": {"a": null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := mcp.Parse(data, "fuzz")
		if err != nil {
			if !errors.Is(err, mcp.ErrBadConfig) {
				t.Fatalf("Parse error %v is not ErrBadConfig", err)
			}
			return
		}
		for _, s := range servers {
			if err := s.Check(); err != nil {
				t.Fatalf("Parse returned a server that fails Check: %v", err)
			}
			if _, err := s.Expand(func(string) (string, bool) { return "v", true }); err != nil && !errors.Is(err, mcp.ErrBadConfig) {
				t.Fatalf("Expand: %v", err)
			}
		}
	})
}

// A server of the project's .mcp.json that troupe cannot read is left out
// with a warning naming it; the user's own servers, and the project's
// others, still start. The project file comes with the repository, and
// one bad entry in it used to stop every server.
func TestLoadProjectBadEntry(t *testing.T) {
	d := t.TempDir()
	set := filepath.Join(d, "settings.json")
	proj := filepath.Join(d, ".mcp.json")
	if err := os.WriteFile(set, []byte(`{"enableAllProjectMcpServers":true,"mcpServers":{"mine":{"command":"x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proj, []byte(`{"mcpServers":{"theirs":{"command":"y","cwd":"z"},"fine":{"command":"w"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	servers, warnings, err := mcp.Load(mcp.Sources{Settings: []string{set}, Project: proj})
	if err != nil {
		t.Fatalf("Load = %v; want the readable servers", err)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"fine", "mine"}) {
		t.Errorf("servers %v; want fine and mine", names)
	}
	if !strings.Contains(strings.Join(warnings, "\n"), `"theirs"`) {
		t.Errorf("warnings %q; want one naming theirs", warnings)
	}
	// The user's own settings stay strict: a bad entry there is an error.
	if err := os.WriteFile(set, []byte(`{"mcpServers":{"mine":{"command":"x","cwd":"z"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mcp.Load(mcp.Sources{Settings: []string{set}}); err == nil || !strings.Contains(err.Error(), `"mine"`) {
		t.Errorf("Load of a bad entry in the user's settings = %v; want an error naming it", err)
	}
}
