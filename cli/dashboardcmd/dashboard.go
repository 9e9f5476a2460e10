// Package dashboardcmd is `troupe dashboard`: the web view of the teams in
// the store, with the local sessions' spending and transcripts.
package dashboardcmd

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/internal/dirwatch"
)

// dashboardCommand serves the web dashboard over the selected store.
// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).dashboardCommand() }

func (a *app) dashboardCommand() *cobra.Command {
	var addr, token string
	var control bool
	cmd := &cobra.Command{
		Use:   "dashboard [--addr HOST:PORT] [--control] [--token TOKEN]",
		Short: "Serve a live web view of the teams in the store (read-only unless --control)",
		Long: `Serve a web page of every team in the store (--store, --home): members,
task board and message timeline, updated live as the team works. With
--control the page can also send messages, stop teammates and answer
permission requests as the lead (not for teammates in panes, which take
only what their lead signed).

Every request needs the access token: $TROUPE_DASHBOARD_TOKEN, --token
(visible to other users in the process list: prefer the variable), or,
on a loopback address, one made at random for this run. Listening beyond
loopback needs a token given on purpose. The printed address carries it;
opening it once sets a cookie. Without a token any user or process on
this machine could read the teams' messages and, with --control, answer
as the lead.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if token == "" {
				token = a.Getenv("TROUPE_DASHBOARD_TOKEN")
			}
			if err := dashboard.CheckListen(addr, token); err != nil {
				return cli.Usagef("--addr: %w", err)
			}
			if token == "" { // on loopback: beyond it a token is given on purpose
				token = rand.Text() // 26 characters, 130 bits
			}
			ctx := cmd.Context()
			s, err := a.Open()
			if err != nil {
				return err
			}
			defer s.Done(&err)
			watch, err := dirwatch.New(dirwatch.Options{})
			if err != nil {
				return err
			}
			defer watch.Close()
			srv, err := dashboard.New(dashboard.Config{Teams: s.Teams, Mail: s.Mail, Tasks: s.Tasks, Control: control, Token: token,
				Now: a.Now, Log: slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
				Spending: a.sessionSpending(), Transcript: a.sessionTranscript(), Workflows: a.sessionWorkflows(), WatchWorkflows: a.watchWorkflows(watch)}) // dashboard_records.go
			if err != nil {
				return err
			}
			return serveDashboard(ctx, a, srv, addr, token, control, s.Where)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", dashboard.DefaultAddr, "listen `HOST:PORT`")
	f.BoolVar(&control, "control", false, "allow sending messages, stopping teammates and answering permission requests from the page")
	f.StringVar(&token, "token", "", "access `TOKEN` required on every request, at least 16 characters (default $TROUPE_DASHBOARD_TOKEN, else one made at random)")
	return cmd
}

// serveDashboard listens on addr, says where, and serves h until ctx
// ends (dashboard.Serve).
func serveDashboard(ctx context.Context, a *app, h http.Handler, addr, token string, control bool, where string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	url := "http://" + ln.Addr().String() + "/"
	if token != "" {
		url += "?token=" + token
	}
	mode := "read-only"
	if control {
		mode = "with control"
	}
	fmt.Fprintf(a.Stdout, "troupe dashboard (%s) of %s at %s\n", mode, where, url)
	return dashboard.Serve(ctx, ln, h)
}
