// Package sessionscmd is `troupe sessions`: the troupe sessions running
// now (interactive, -p, coordinator, worker), as their registry shows
// them: on the file store <home>/sessions/live, on the NATS store the
// namespace's sessions bucket, every host's (docs/cli.md).
package sessionscmd

import (
	"context"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/peer"
	"github.com/troupe-dev/troupe/store/file"
	natsstore "github.com/troupe-dev/troupe/store/nats"
)

type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).command() }

func (a *app) command() *cobra.Command {
	return &cobra.Command{
		Use:   "sessions",
		Short: "List the running troupe sessions other sessions can message",
		Long: `List the troupe sessions running now: their id, name, kind, state, host, pid,
start and working folder. With the file store (the default) these are the
sessions of this machine under --home; with a NATS store (--store), those of
every host in its namespace. A session's lead reaches them with ListAgents and
SendMessage (docs/teams.md, "Addressing"). --json prints the entries.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.run(cmd.Context()) },
	}
}

// Registry returns the session registry the command line selects.
func Registry(ctx context.Context, a *cli.App) (peer.Registry, func(), error) {
	spec, err := a.StoreSpec()
	if err != nil {
		return nil, nil, err
	}
	if spec.URL == "" {
		home, err := a.Home()
		if err != nil {
			return nil, nil, err
		}
		return file.NewSessions(home), func() {}, nil
	}
	s, err := natsstore.Open(ctx, spec.URL, spec.Options)
	if err != nil {
		return nil, nil, err
	}
	return s.Sessions(), func() { s.Close() }, nil
}

func (a *app) run(ctx context.Context) error {
	reg, done, err := Registry(ctx, a.App)
	if err != nil {
		return err
	}
	defer done()
	entries, err := reg.List(ctx)
	if err != nil {
		return err
	}
	if a.JSON {
		if entries == nil {
			entries = []peer.Entry{}
		}
		return a.PrintJSON(entries)
	}
	w := a.Table()
	cli.Row(w, "ID", "NAME", "KIND", "STATE", "HOST", "PID", "STARTED", "FOLDER")
	for _, e := range entries {
		state := e.State
		if !e.Peers {
			state += " (no peer messages)"
		}
		cli.Row(w, peer.Short(e.ID), e.Label(), e.Kind, state, e.Host, itoa(e.PID), e.Started.Local().Format(time.DateTime), e.Folder)
	}
	return w.Flush()
}

func itoa(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}
