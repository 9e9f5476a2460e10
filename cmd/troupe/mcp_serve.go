package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/inbox"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

// mcpBackendType is the backendType of a member attached through troupe
// mcp serve.
const mcpBackendType = "mcp"

// mcpServeInstructions tell the connecting agent how to be a teammate.
const mcpServeInstructions = `You are %s, a member of the agent team %q run by troupe. Coordinate only through these tools:
ReadInbox reads messages from the lead and teammates; SendMessage answers them (to a name, or "*" for everyone);
TaskList, TaskGet, TaskCreate and TaskUpdate work on the shared task list (claim a task by setting its owner to %q and status in_progress, and mark it completed when done);
TeamMembers lists the team. When you have nothing to do, call WaitForWork: it tells the lead you are idle and returns the next message or claimable task.
When a shutdown_request arrives, answer it with SendMessage (message {"type":"shutdown_response","request_id":...,"approve":true}); approving ends your membership.`

// mcpServeCommand is troupe mcp serve: a team member's coordination tools
// checkServeAddr refuses --http beyond loopback without --token.
func checkServeAddr(httpAddr, token, name string) error {
	if httpAddr == "" || token != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return usagef("--http %q: %v", httpAddr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usagef("--http %s is not a loopback address: set --token so that only holders of it can act as %s", httpAddr, name)
	}
	return nil
}

// over MCP, so that any MCP-capable agent can be a teammate.
func (a *app) mcpServeCommand() *cobra.Command {
	var teamName, name, httpAddr, token, color string
	c := &cobra.Command{
		Use:   "serve --team TEAM --agent NAME",
		Short: "Serve a teammate's coordination tools over MCP (stdio, or --http), joining TEAM as NAME",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if teamName == "" || name == "" {
				return usagef("mcp serve needs --team and --agent")
			}
			if err := checkServeAddr(httpAddr, token, name); err != nil {
				return err
			}
			s, err := a.open()
			if err != nil {
				return err
			}
			defer s.done(&err)
			ctx := cmd.Context()
			cfg, err := s.team(ctx, "--team", teamName)
			if err != nil {
				return err
			}
			cwd, _ := a.Getwd()
			member, err := team.AddMember(ctx, s.Teams, cfg.Name, team.Member{Name: name, Color: color, Cwd: cwd, BackendType: mcpBackendType,
				AgentType: "mcp", TmuxPaneID: ""}, a.Now())
			if err != nil {
				return fmt.Errorf("join team %s: %w", cfg.Name, err)
			}
			if member.BackendType != mcpBackendType {
				return fmt.Errorf("join team %s: %s is already a member with backend %q; pick another --agent", cfg.Name, name, member.BackendType)
			}
			_ = team.SetActive(ctx, s.Teams, cfg.Name, member.Name, true)
			fmt.Fprintf(a.Stderr, "troupe mcp serve: %s joined team %q\n", member.AgentID, cfg.Name)
			ctx, stop := context.WithCancelCause(ctx)
			defer stop(nil)
			var left sync.Once
			leave := func() {
				left.Do(func() {
					// A fresh context: the serving one may be ending.
					lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
					defer cancel()
					if err := team.RemoveMember(lctx, s.Teams, cfg.Name, member.Name); err != nil && !errors.Is(err, team.ErrNotFound) {
						fmt.Fprintf(a.Stderr, "troupe mcp serve: leave team %s: %v\n", cfg.Name, err)
					}
				})
			}
			tools := teamMemberTools(s.Stores, cfg.Name, member, a.Now, func(string) {
				leave()
				fmt.Fprintf(a.Stderr, "troupe mcp serve: %s approved its shutdown and left team %q\n", member.AgentID, cfg.Name)
				// After the approving call's answer has gone out.
				time.AfterFunc(300*time.Millisecond, func() { stop(errors.New("shutdown approved")) })
			})
			srv := mcp.Expose("troupe-teammate", a.Version, fmt.Sprintf(mcpServeInstructions, member.Name, cfg.Name, member.Name), tools)
			defer func() {
				// A client that disconnects without approving a shutdown
				// stays on the roster, inactive, so the lead sees it went.
				lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				_ = team.SetActive(lctx, s.Teams, cfg.Name, member.Name, false)
			}()
			if httpAddr != "" {
				return serveMCPHTTP(ctx, httpAddr, token, srv.Handler(), a.Stdout) // stdout is free without stdio
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
	f.StringVar(&httpAddr, "http", "", "serve streamable HTTP on `ADDR` instead of stdio (loopback unless --token is set)")
	f.StringVar(&token, "token", "", "with --http: require Authorization: Bearer `TOKEN`")
	return c
}

// teamMemberTools are the tools of a member attached over MCP: the team
// tools (SendMessage, TaskCreate, TaskGet, TaskList, TaskUpdate) and the
// inbox tools (ReadInbox, WaitForWork, TeamMembers).
func teamMemberTools(st Stores, teamName string, m team.Member, now func() time.Time, shutdown func(requestID string)) []tool.Tool {
	self := teamtool.Self{Team: teamName, Name: m.Name, Color: m.Color, PaneID: mcpBackendType, Backend: mcpBackendType}
	var out []tool.Tool
	for _, t := range teamtool.Tools(teamtool.Config{Teams: st.Teams, Mail: st.Mail, Tasks: st.Tasks, Now: now,
		Self: func() teamtool.Self { return self }, Hooks: teamtool.Hooks{ShutdownApproved: shutdown}}) {
		if t.Spec().Name != "ExitPlanMode" {
			out = append(out, t)
		}
	}
	return append(out, inbox.Tools(inbox.Config{Teams: st.Teams, Mail: st.Mail, Tasks: st.Tasks, Team: teamName, Name: m.Name, Color: m.Color, Now: now})...)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveMCPHTTP serves h on addr until ctx ends, requiring the bearer
// token when one is set.
func serveMCPHTTP(ctx context.Context, addr, token string, h http.Handler, log io.Writer) error {
	if token != "" {
		next := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "troupe mcp serve: missing or wrong bearer token", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	fmt.Fprintf(log, "troupe mcp serve: streamable HTTP on http://%s/\n", ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
