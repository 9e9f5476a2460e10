package settings

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Project is what a folder's own files would make troupe do, for the
// trust question: Runs are the programs they can start (hook commands
// and MCP servers), the trust fingerprint; Widens are the permissions
// they would widen (defaultMode, additionalDirectories, allow rules).
type Project struct {
	Runs, Widens []string
}

// ProjectFiles are the files of a folder that Inspect reads: the four
// project settings files, then .mcp.json.
func ProjectFiles(cwd string) []string {
	var out []string
	for _, f := range Files("", cwd) {
		out = append(out, f.Path)
	}
	return append(out, filepath.Join(cwd, ".mcp.json"))
}

// Inspect reads what the project files of cwd hold that trust gates. A
// file that cannot be read or parsed is reported as such among Runs: it
// might hold anything.
func Inspect(cwd string) Project {
	var p Project
	for _, path := range ProjectFiles(cwd) {
		data, err := os.ReadFile(path)
		if err != nil {
			if !os.IsNotExist(err) {
				p.Runs = append(p.Runs, fmt.Sprintf("unreadable file %s: %v", rel(cwd, path), err))
			}
			continue
		}
		var top map[string]json.RawMessage
		if len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		if err := json.Unmarshal(data, &top); err != nil {
			p.Runs = append(p.Runs, fmt.Sprintf("malformed file %s", rel(cwd, path)))
			continue
		}
		in := " (" + rel(cwd, path) + ")"
		p.Runs = append(p.Runs, hookItems(top["hooks"], in)...)
		p.Runs = append(p.Runs, serverItems(top["mcpServers"], in)...)
		var perms struct {
			Allow       []string `json:"allow"`
			DefaultMode string   `json:"defaultMode"`
			Dirs        []string `json:"additionalDirectories"`
		}
		if raw, ok := top["permissions"]; ok && json.Unmarshal(raw, &perms) == nil {
			if perms.DefaultMode != "" {
				p.Widens = append(p.Widens, "permissions.defaultMode "+perms.DefaultMode+in)
			}
			for _, d := range perms.Dirs {
				p.Widens = append(p.Widens, "permissions.additionalDirectories "+d+in)
			}
			for _, r := range perms.Allow {
				p.Widens = append(p.Widens, "permissions.allow "+r+in)
			}
		}
	}
	p.Runs = sorted(p.Runs)
	return p
}

// hookItems lists each command of a hooks block, by event.
func hookItems(raw json.RawMessage, in string) []string {
	var events map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &events) != nil {
		if len(raw) > 0 && string(raw) != "null" {
			return []string{"a malformed hooks block" + in}
		}
		return nil
	}
	var out []string
	for ev, v := range events {
		for _, c := range commands(v) {
			out = append(out, "hook "+ev+": "+c+in)
		}
	}
	return out
}

// commands returns every "command" and "url" string below v.
func commands(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "command" || k == "url") {
				out = append(out, s)
			} else {
				out = append(out, commands(x)...)
			}
		}
	case []any:
		for _, x := range v {
			out = append(out, commands(x)...)
		}
	}
	slices.Sort(out)
	return out
}

// serverItems lists each MCP server of an mcpServers block with its
// whole configuration (keys sorted).
func serverItems(raw json.RawMessage, in string) []string {
	var servers map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &servers) != nil {
		if len(raw) > 0 && string(raw) != "null" {
			return []string{"a malformed mcpServers block" + in}
		}
		return nil
	}
	var out []string
	for name, cfg := range servers {
		b, _ := json.Marshal(cfg) // maps marshal with sorted keys
		out = append(out, fmt.Sprintf("MCP server %s: %s%s", name, b, in))
	}
	return out
}

func rel(cwd, path string) string {
	if r, err := filepath.Rel(cwd, path); err == nil {
		return r
	}
	return path
}
