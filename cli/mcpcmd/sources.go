package mcpcmd

import (
	"errors"
	"path/filepath"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/permission/settings"
)

// Sources returns where the MCP servers of an agent in cwd are
// configured: the --mcp-config values (configs; only them when strict),
// the project's .mcp.json and the settings files. The project's files
// start nothing when the user has not trusted cwd (settings.Trust), and
// its committed settings files never approve its .mcp.json servers.
func Sources(a *cli.App, cwd string, configs []string, strict bool) (mcp.Sources, error) {
	src := mcp.Sources{Flags: configs, Strict: strict, Project: filepath.Join(cwd, ".mcp.json")}
	home, err := a.Home()
	if err != nil {
		return src, err
	}
	user, _ := a.UserHomes()
	if user != "" { // Claude Code's user settings, then troupe's
		src.Settings = append(src.Settings, filepath.Join(user, ".claude", "settings.json"))
	}
	for _, f := range settings.Files(home, cwd) {
		src.Settings = append(src.Settings, f.Path)
		if f.Scope == settings.ScopeClaude || f.Scope == settings.ScopeProject { // committed: approves nothing
			src.NoApprovals = append(src.NoApprovals, f.Path)
		}
		if f.Untrusted {
			src.Untrusted = append(src.Untrusted, f.Path)
			src.ProjectUntrusted = true
		}
	}
	return src, nil
}

// Options reads MCP_TIMEOUT and MCP_TOOL_TIMEOUT (milliseconds, as
// Claude Code's); a malformed one is a usage error.
func Options(a *cli.App, cwd string) (mcp.Options, error) {
	opts, err := mcp.EnvOptions(cwd, a.Getenv)
	return opts, usage(err)
}

// usage makes an *mcp.ArgError a usage error.
func usage(err error) error {
	if ae, ok := errors.AsType[*mcp.ArgError](err); ok {
		return &cli.UsageError{Err: ae.Err}
	}
	return err
}
