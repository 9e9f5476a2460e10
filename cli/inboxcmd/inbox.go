// Package inboxcmd is `troupe inbox`: send, read and watch team members'
// inboxes in the store, for people and scripts.
package inboxcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).inboxCommand() }

func (a *app) inboxCommand() *cobra.Command {
	return cli.Group("inbox", "Send, read and watch team members' inboxes",
		a.inboxSendCommand(),
		a.inboxReadCommand(),
		a.inboxWatchCommand(),
	)
}

// Sent is the JSON answer of inbox send.
type Sent struct {
	Team       string     `json:"team"`
	From       string     `json:"from"`
	Deliveries []Delivery `json:"deliveries"`
}

type Delivery struct {
	To string `json:"to"`
	ID string `json:"msg_id"`
}

func (a *app) inboxSendCommand() *cobra.Command {
	var teamName, to, from, summary, color string
	cmd := &cobra.Command{
		Use:   "send --team T --to NAME|* --from NAME TEXT|-",
		Short: "Send a message to a member, or to every member with --to '*'",
		Long: `Send a message to a member's inbox, or with --to '*' to every member but
the sender. TEXT "-" reads the text from standard input.`,
		Args: cli.Positional("TEXT"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			text := args[0]
			if text == "-" {
				b, err := io.ReadAll(io.LimitReader(a.Stdin, mailbox.MaxTextLen+1))
				if err != nil {
					return fmt.Errorf("read message text from stdin: %w", err)
				}
				text = strings.TrimSuffix(string(b), "\n")
			}
			if strings.TrimSpace(text) == "" {
				return cli.Usagef("TEXT: empty message")
			}
			if err := cli.CheckColor(color); err != nil {
				return err
			}
			if len(text) > mailbox.MaxTextLen {
				return cli.Usagef("TEXT: longer than %d bytes", mailbox.MaxTextLen)
			}
			ctx := cmd.Context()
			s, c, err := a.OpenTeam(ctx, teamName)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			if err := cli.Member(c, "--from", from); err != nil {
				return err
			}
			if color == "" {
				m, _ := c.Member(from)
				color = m.Color
			}
			ds, err := s.Mail.Send(ctx, c.Name, to, mailbox.Message{From: from, Text: text, Summary: summary, Color: color})
			if err != nil {
				var ure *mailbox.UnknownRecipientError
				if errors.As(err, &ure) {
					return cli.Describef(err, "--to: %v", ure)
				}
				if errors.Is(err, mailbox.ErrOutcomeUnknown) {
					// The one send error after which the message may still
					// land: a distinct status, so a script does not resend.
					fmt.Fprintf(a.Stderr, "troupe: send to %s in team %s: %s\n", to, c.Name, termtext.Clean(err.Error()))
					return &cli.ExitError{Code: cli.ExitOutcomeUnknown, Msg: err.Error()}
				}
				return fmt.Errorf("send to %s in team %s: %w", to, c.Name, err)
			}
			return a.printSent(c.Name, from, ds)
		},
	}
	f := cmd.Flags()
	f.StringVar(&teamName, "team", "", "`NAME` of the team")
	f.StringVar(&to, "to", "", "`NAME` of the recipient, or '*' for every member but the sender")
	f.StringVar(&from, "from", "", "`NAME` of the sender, a member")
	f.StringVar(&summary, "summary", "", "short preview `TEXT` of the message")
	f.StringVar(&color, "color", "", "sender `COLOR` (default: the sender's roster color)")
	for _, n := range []string{"team", "to", "from"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// printSent says where troupe inbox send delivered.
func (a *app) printSent(teamName, from string, ds []mailbox.Delivery) (err error) {
	if a.JSON {
		out := Sent{Team: teamName, From: from, Deliveries: make([]Delivery, len(ds))}
		for i, d := range ds {
			out.Deliveries[i] = Delivery{To: d.To, ID: d.ID}
		}
		return a.PrintJSON(out)
	}
	if len(ds) == 0 {
		_, err = fmt.Fprintf(a.Stdout, "no recipients: %s is the only member of team %s\n", from, teamName)
		return err
	}
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.To
	}
	_, err = fmt.Fprintf(a.Stdout, "sent to %s\n", strings.Join(names, ", "))
	return err
}

func (a *app) inboxReadCommand() *cobra.Command {
	var teamName, agent string
	var unread, markRead bool
	cmd := &cobra.Command{
		Use:   "read --team T --agent NAME",
		Short: "Print the messages in a member's inbox, oldest first",
		Args:  cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			ctx := cmd.Context()
			s, c, err := a.openInbox(ctx, teamName, agent)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			msgs, rerr := s.Mail.Read(ctx, c.Name, agent, unread)
			if rerr != nil && !errors.Is(rerr, mailbox.ErrCorrupt) {
				return fmt.Errorf("read inbox of %s in team %s: %w", agent, c.Name, rerr)
			}
			if a.JSON {
				if msgs == nil {
					msgs = []mailbox.Message{}
				}
				err = a.PrintJSON(msgs)
			} else if len(msgs) == 0 {
				what := "no messages"
				if unread {
					what = "no unread messages"
				}
				_, err = fmt.Fprintf(a.Stdout, "%s in the inbox of %s\n", what, cli.Cell(agent))
			} else {
				w := a.Table()
				cli.Row(w, "TIME", "FROM", "STATUS", "MESSAGE")
				for _, m := range msgs {
					status := "unread"
					if m.Read {
						status = "read"
					}
					lines := strings.Split(mailbox.Line(m.Text), "\n")
					cli.Row(w, cli.LocalTime(m.Timestamp), m.From, status, lines[0])
					for _, l := range lines[1:] {
						fmt.Fprintf(w, "\t\t\t%s\n", termtext.Line(strings.ReplaceAll(l, "\t", " ")))
					}
				}
				err = w.Flush()
			}
			if err != nil {
				return err
			}
			if markRead {
				if err := markMessages(ctx, s.Mail, c.Name, agent, msgs); err != nil {
					return err
				}
			}
			// A corrupt inbox was moved aside (nothing lost); say so and fail.
			return rerr
		},
	}
	f := cmd.Flags()
	f.StringVar(&teamName, "team", "", "`NAME` of the team")
	f.StringVar(&agent, "agent", "", "`NAME` of the member whose inbox to read")
	f.BoolVar(&unread, "unread", false, "only unread messages")
	f.BoolVar(&markRead, "mark-read", false, "mark the printed messages read")
	for _, n := range []string{"team", "agent"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// openInbox opens the stores and the team named by --team, and checks
// that --agent is on its roster; nothing is left open on an error.
func (a *app) openInbox(ctx context.Context, teamName, agent string) (*cli.Opened, team.Config, error) {
	s, c, err := a.OpenTeam(ctx, teamName)
	if err != nil {
		return nil, team.Config{}, err
	}
	if err := cli.Member(c, "--agent", agent); err != nil {
		_ = s.Release() // the roster error is the one to report
		return nil, team.Config{}, err
	}
	return s, c, nil
}

// markMessages marks the unread ones of msgs read.
func markMessages(ctx context.Context, mail mailbox.Store, teamName, agent string, msgs []mailbox.Message) error {
	var ids []string
	for _, m := range msgs {
		if !m.Read && m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := mail.MarkRead(ctx, teamName, agent, ids); err != nil {
		return fmt.Errorf("mark messages of %s in team %s read: %w", agent, teamName, err)
	}
	return nil
}

func (a *app) inboxWatchCommand() *cobra.Command {
	var teamName, agent string
	var markRead, all bool
	cmd := &cobra.Command{
		Use:   "watch --team T --agent NAME",
		Short: "Print messages as they arrive in a member's inbox, until interrupted",
		Long: `Print the unread messages in a member's inbox, then every message as it
arrives, each once, until interrupted. --all starts with the read messages
too. With --json each message is one line of JSON.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			ctx := cmd.Context()
			s, c, err := a.openInbox(ctx, teamName, agent)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			return a.watch(ctx, s.Mail, c, agent, all, markRead)
		},
	}
	f := cmd.Flags()
	f.StringVar(&teamName, "team", "", "`NAME` of the team")
	f.StringVar(&agent, "agent", "", "`NAME` of the member whose inbox to watch")
	f.BoolVar(&markRead, "mark-read", false, "mark messages read once printed")
	f.BoolVar(&all, "all", false, "start with the messages already read, too")
	for _, n := range []string{"team", "agent"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// watch prints agent's messages as they arrive until ctx is done. It
// subscribes before the first read, so nothing sent after it starts is
// missed, and re-reads the whole inbox on every (coalesced) kick, printing
// only messages it has not printed yet.
func (a *app) watch(ctx context.Context, mail mailbox.Store, c team.Config, agent string, all, markRead bool) error {
	kicks, err := mail.Watch(ctx, c.Name, agent)
	if err != nil {
		return fmt.Errorf("watch inbox of %s in team %s: %w", agent, c.Name, err)
	}
	enc := json.NewEncoder(a.Stdout)
	enc.SetEscapeHTML(false)
	seen := map[string]bool{}
	first := true
	for {
		msgs, err := mail.Read(ctx, c.Name, agent, false)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, mailbox.ErrCorrupt):
			fmt.Fprintf(a.Stderr, "troupe: warning: %s\n", termtext.Clean(err.Error()))
		case err != nil:
			return fmt.Errorf("watch inbox of %s in team %s: %w", agent, c.Name, err)
		}
		// Keep only keys still in the inbox: pruned messages never return,
		// so the set stays as small as the inbox.
		now := make(map[string]bool, len(msgs))
		var printed []mailbox.Message
		for _, m := range msgs {
			k := messageKey(m)
			now[k] = true
			if seen[k] || (first && m.Read && !all) {
				continue
			}
			if a.JSON {
				err = enc.Encode(m)
			} else {
				err = a.printWatched(m)
			}
			if err != nil {
				return err
			}
			printed = append(printed, m)
		}
		seen, first = now, false
		if markRead {
			if err := markMessages(ctx, mail, c.Name, agent, printed); err != nil && ctx.Err() == nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-kicks:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("watch inbox of %s in team %s: watch ended (store closed)", agent, c.Name)
			}
		}
	}
}

// messageKey identifies a message across reads: its id, or for entries
// written without one (older Claude Code), sender, time and text.
func messageKey(m mailbox.Message) string {
	if m.ID != "" {
		return m.ID
	}
	return m.From + "|" + m.Timestamp.String() + "|" + m.Text
}

// printWatched prints one message as a line, with any further lines of its
// text indented beneath.
func (a *app) printWatched(m mailbox.Message) error {
	lines := strings.Split(mailbox.Line(m.Text), "\n")
	if _, err := fmt.Fprintf(a.Stdout, "%s  %s: %s\n", cli.LocalTime(m.Timestamp), termtext.Line(m.From), termtext.Line(lines[0])); err != nil {
		return err
	}
	for _, l := range lines[1:] {
		if _, err := fmt.Fprintf(a.Stdout, "    %s\n", termtext.Clean(l)); err != nil {
			return err
		}
	}
	return nil
}
