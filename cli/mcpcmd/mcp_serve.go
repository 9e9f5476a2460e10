package mcpcmd

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/session/kit"
)

// EnvMCPToken is the bearer token of troupe mcp serve --http, when
// --token is not given (a flag's value is on the command line, which
// every local user can read).
const EnvMCPToken = "TROUPE_MCP_TOKEN"

// checkServeAddr refuses a token shorter than mcp.MinTokenLen, and --http
// beyond loopback without a token given on purpose.
func checkServeAddr(httpAddr, token, name string) error {
	if httpAddr == "" {
		return nil
	}
	if token != "" && len(token) < mcp.MinTokenLen {
		return cli.Usagef("mcp serve --http: a bearer token of %d characters is too easy to guess: use at least %d (--token or $%s; on loopback give none, and one is made)", len(token), mcp.MinTokenLen, EnvMCPToken)
	}
	if token != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return cli.Usagef("--http %q: %v", httpAddr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return cli.Usagef("--http %s is not a loopback address: set $%s (or --token) so that only holders of it can act as %s", httpAddr, EnvMCPToken, name)
	}
	return nil
}

// mcpServeCommand is troupe mcp serve: a team member's coordination tools
// over MCP, so that any MCP-capable agent can be a teammate
// (kit.MCPMember).
func (a *app) mcpServeCommand() *cobra.Command {
	var teamName, name, httpAddr, token, color string
	c := &cobra.Command{
		Use:   "serve --team TEAM --agent NAME",
		Short: "Serve a teammate's coordination tools over MCP (stdio, or --http), joining TEAM as NAME",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if teamName == "" || name == "" {
				return cli.Usagef("mcp serve needs --team and --agent")
			}
			if token == "" {
				token = a.Getenv(EnvMCPToken)
			}
			if err := checkServeAddr(httpAddr, token, name); err != nil {
				return err
			}
			made := httpAddr != "" && token == ""
			if made { // on loopback: beyond it a token is given on purpose
				token = rand.Text() // 26 characters, 130 bits
			}
			ctx := cmd.Context()
			s, cfg, err := a.OpenTeam(ctx, teamName)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			cwd, _ := a.Getwd()
			m, err := kit.JoinMCP(ctx, kit.MCPMemberConfig{Stores: kit.Stores{Teams: s.Teams, Mail: s.Mail, Tasks: s.Tasks}, Team: cfg.Name, Name: name, Color: color, Cwd: cwd, Now: a.Now})
			if err != nil {
				return err
			}
			id := m.Member().AgentID
			fmt.Fprintf(a.Stderr, "troupe mcp serve: %s joined team %q\n", id, cfg.Name)
			ctx, stop := context.WithCancelCause(ctx)
			defer stop(nil)
			srv := m.Server(a.Version, func(string) {
				if err := m.Leave(ctx); err != nil {
					fmt.Fprintf(a.Stderr, "troupe mcp serve: leave team %s: %v\n", cfg.Name, err)
				}
				fmt.Fprintf(a.Stderr, "troupe mcp serve: %s approved its shutdown and left team %q\n", id, cfg.Name)
				// After the approving call's answer has gone out.
				time.AfterFunc(300*time.Millisecond, func() { stop(errors.New("shutdown approved")) })
			})
			defer m.Disconnect(ctx)
			if httpAddr != "" {
				ln, err := net.Listen("tcp", httpAddr)
				if err != nil {
					return fmt.Errorf("--http: %w", err)
				}
				fmt.Fprintf(a.Stdout, "troupe mcp serve: streamable HTTP on http://%s/\n", ln.Addr()) // stdout is free without stdio
				if made {
					fmt.Fprintf(a.Stdout, "troupe mcp serve: every request needs the header Authorization: Bearer %s\n", token)
				}
				return srv.ServeHTTP(ctx, ln, token)
			}
			in, out := io.NopCloser(a.Stdin), nopWriteCloser{a.Stdout}
			if err := srv.ServeStdio(ctx, in, out); err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&teamName, "team", "", "the `TEAM` to join")
	f.StringVar(&name, "agent", "", "the member `NAME` to join as")
	f.StringVar(&color, "color", "", "display `COLOR` (default: the next of the palette)")
	f.StringVar(&httpAddr, "http", "", "serve streamable HTTP on `ADDR` instead of stdio (loopback unless a token is given)")
	f.StringVar(&token, "token", "", "with --http: require Authorization: Bearer `TOKEN`, at least 16 characters (default $"+EnvMCPToken+", which other users cannot read in the process list; else one made at random and printed)")
	return c
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
