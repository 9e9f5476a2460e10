// Package mcpcmd is `troupe mcp`: the MCP servers of the settings files and
// .mcp.json (list, get, add, remove), and a teammate served over MCP
// (`troupe mcp serve`). Sources and Options are where the lead finds its
// servers too.
package mcpcmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/mcp"
)

// mcpCommand is troupe mcp: configure MCP servers, and serve a teammate
// over MCP (mcp_serve.go).
// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).mcpCommand() }

func (a *app) mcpCommand() *cobra.Command {
	return cli.Group("mcp", "Configure MCP servers (their tools reach every agent)",
		a.mcpListCommand(), a.mcpGetCommand(), a.mcpAddCommand(), a.mcpRemoveCommand(), a.mcpServeCommand())
}

// mcpScopePath returns the file of a scope for cwd (mcp.ScopePath).
func (a *app) mcpScopePath(scope, cwd string) (string, error) {
	home, err := a.Home()
	if err != nil {
		return "", err
	}
	path, err := mcp.ScopePath(scope, cwd, home)
	if errors.Is(err, mcp.ErrBadScope) {
		return "", cli.Usagef("--scope: %v", err)
	}
	return path, err
}

func (a *app) mcpAddCommand() *cobra.Command {
	var scope, transport string
	var env, headers []string
	c := &cobra.Command{
		Use:   "add [flags] NAME COMMAND_OR_URL [ARGS...]",
		Short: "Add an MCP server: a command (stdio) or a url (--transport http or sse)",
		Example: `  troupe mcp add github -e GITHUB_TOKEN='${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github
  troupe mcp add --transport http -H 'Authorization: Bearer ${TOKEN}' tracker https://mcp.example.com/mcp`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cwd, err := a.Getwd()
			if err != nil {
				return err
			}
			path, err := a.mcpScopePath(scope, cwd)
			if err != nil {
				return err
			}
			s, err := mcp.ServerArgs{Transport: transport, Args: args, Env: env, Headers: headers}.Server(path)
			if err != nil {
				return usage(err)
			}
			if err := mcp.AddServer(cmd.Context(), path, s); err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "Added %s MCP server %s to %s (%s scope)\n", s.Kind(), s.Name, path, scope)
			if scope == "project" {
				fmt.Fprintf(a.Stdout, "Project servers run once approved: add \"enabledMcpjsonServers\": [%q] to .troupe/settings.local.json or .claude/settings.local.json\n", s.Name)
			}
			return nil
		},
	}
	f := c.Flags()
	f.SetInterspersed(false) // flags after the command are the server's
	f.StringVarP(&scope, "scope", "s", "local", "where to keep it: local (.troupe/settings.local.json), project (.mcp.json) or user ($TROUPE_HOME/settings.json)")
	f.StringVarP(&transport, "transport", "t", "stdio", "stdio, http or sse")
	f.StringArrayVarP(&env, "env", "e", nil, "`KEY=value` for a stdio server's environment; repeatable")
	f.StringArrayVarP(&headers, "header", "H", nil, "`\"Name: value\"` sent to an http or sse server; repeatable")
	return c
}

func (a *app) mcpRemoveCommand() *cobra.Command {
	var scope string
	c := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an MCP server (from the one scope that has it, or from --scope)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cwd, err := a.Getwd()
			if err != nil {
				return err
			}
			scopes := mcp.Scopes
			if scope != "" {
				if _, err := a.mcpScopePath(scope, cwd); err != nil {
					return err
				}
				scopes = []string{scope}
			}
			home, err := a.Home()
			if err != nil {
				return err
			}
			found, err := mcp.ScopesOf(args[0], cwd, home, scopes)
			if err != nil {
				return err
			}
			switch len(found) {
			case 0:
				return fmt.Errorf("remove %s: %w in scope %s", args[0], mcp.ErrNotFound, strings.Join(scopes, ", "))
			case 1:
			default:
				return cli.Usagef("MCP server %s is in scopes %s: say which with --scope", args[0], strings.Join(found, " and "))
			}
			path, _ := a.mcpScopePath(found[0], cwd)
			if err := mcp.RemoveServer(cmd.Context(), path, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "Removed MCP server %s from %s (%s scope)\n", args[0], path, found[0])
			return nil
		},
	}
	c.Flags().StringVarP(&scope, "scope", "s", "", "local, project or user; by default the one scope that has it")
	return c
}

func (a *app) mcpListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the configured MCP servers, connecting to each to check it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sts, err := a.mcpCheck(cmd, "")
			if err != nil {
				return err
			}
			if len(sts) == 0 {
				fmt.Fprintln(a.Stdout, "No MCP servers configured. Add one with troupe mcp add.")
			}
			for _, st := range sts {
				fmt.Fprintln(a.Stdout, st)
			}
			return nil
		},
	}
}

func (a *app) mcpGetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "get NAME",
		Short: "Show one MCP server: where it is configured, how it starts, its state and tools",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sts, err := a.mcpCheck(cmd, args[0])
			if err != nil {
				return err
			}
			if len(sts) == 0 {
				return fmt.Errorf("get %s: %w", args[0], mcp.ErrNotFound)
			}
			st := sts[0]
			fmt.Fprintln(a.Stdout, st)
			if st.Err != nil {
				fmt.Fprintf(a.Stdout, "  error: %s\n", strings.ReplaceAll(st.Err.Error(), "\n", "\n    "))
			}
			for _, t := range st.Tools {
				fmt.Fprintf(a.Stdout, "  tool %s\n", t)
			}
			return nil
		},
	}
}

// mcpCheck loads the servers of the working folder (only name's when
// set), starts them and returns their states; it stops them before
// returning.
func (a *app) mcpCheck(cmd *cobra.Command, name string) ([]mcp.Status, error) {
	cwd, err := a.Getwd()
	if err != nil {
		return nil, err
	}
	src, err := Sources(a.App, cwd, nil, false)
	if err != nil {
		return nil, err
	}
	opts, err := Options(a.App, cwd)
	if err != nil {
		return nil, err
	}
	sts, warnings, err := mcp.Check(cmd.Context(), src, opts, name)
	for _, w := range warnings {
		fmt.Fprintln(a.Stderr, "troupe: warning:", w)
	}
	return sts, err
}
