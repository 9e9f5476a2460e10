// Package teamcmd is `troupe team`: list, show, create and delete teams in
// the store and edit their rosters, for people and scripts.
package teamcmd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/team"
)

// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).teamCommand() }

func (a *app) teamCommand() *cobra.Command {
	return cli.Group("team", "List, show, create and delete teams, and edit their rosters",
		a.teamListCommand(),
		a.teamShowCommand(),
		a.teamCreateCommand(),
		a.teamDeleteCommand(),
		a.teamAddCommand(),
		a.teamRemoveCommand(),
		a.teamHideCommand(true),
		a.teamHideCommand(false),
	)
}

func (a *app) teamListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the teams",
		Args:  cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			s, err := a.Open()
			if err != nil {
				return err
			}
			defer s.Done(&err)
			teams, lerr := s.Teams.List(cmd.Context())
			if lerr != nil && teams == nil {
				return lerr
			}
			if a.JSON {
				if teams == nil {
					teams = []team.Config{}
				}
				err = a.PrintJSON(teams)
			} else if len(teams) == 0 {
				_, err = fmt.Fprintln(a.Stdout, "no teams (create one with troupe team create NAME)")
			} else {
				w := a.Table()
				cli.Row(w, "NAME", "MEMBERS", "CREATED", "DESCRIPTION")
				for _, t := range teams {
					cli.Row(w, t.Name, strconv.Itoa(len(t.Members)), cli.EpochTime(t.CreatedAt), t.Description)
				}
				err = w.Flush()
			}
			if err != nil {
				return err
			}
			return lerr // some team files could not be read; the rest were listed
		},
	}
}

func (a *app) teamShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show a team and its members",
		Args:  cli.Positional("NAME"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			s, err := a.Open()
			if err != nil {
				return err
			}
			defer s.Done(&err)
			c, err := s.Team(cmd.Context(), "NAME", args[0])
			if err != nil {
				return err
			}
			if a.JSON {
				return a.PrintJSON(c)
			}
			w := a.Table()
			cli.Row(w, "Team:", c.Name)
			if c.Description != "" {
				cli.Row(w, "Description:", c.Description)
			}
			cli.Row(w, "Created:", cli.EpochTime(c.CreatedAt))
			cli.Row(w, "Lead:", c.LeadAgentID)
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(a.Stdout)
			w = a.Table()
			cli.Row(w, "NAME", "AGENT ID", "TYPE", "MODEL", "COLOR", "BACKEND", "ACTIVE", "JOINED", "CWD")
			problems := c.CheckMembers()
			for i, m := range c.Members {
				active := "no"
				if m.Active() {
					active = "yes"
				}
				name := m.Name
				if problems[i] != nil {
					name = fmt.Sprintf("%s (invalid: %v)", cli.Cell(m.Name), problems[i])
				}
				cli.Row(w, name, m.AgentID, m.AgentType, m.Model, m.Color, m.BackendType, active, cli.EpochTime(m.JoinedAt), m.Cwd)
			}
			return w.Flush()
		},
	}
}

func (a *app) teamCreateCommand() *cobra.Command {
	var description string
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a team whose only member is its lead",
		Long: `Create a team whose only member is its lead, team-lead.

The name is canonicalised as Claude Code names team folders: lower case,
every character other than a-z and 0-9 replaced by '-'. Creating a team
that already exists is an error.`,
		Args: cli.Positional("NAME"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			name, err := team.CanonicalName(args[0])
			if err != nil {
				return cli.Usagef("NAME: %w", err)
			}
			s, err := a.Open()
			if err != nil {
				return err
			}
			defer s.Done(&err)
			ctx := cmd.Context()
			// team.Create picks a suffixed name when the name is taken;
			// a person or script that named the team wants that name or an
			// error, so check first.
			if _, err := s.Teams.Get(ctx, name); err == nil {
				return fmt.Errorf("create team %s: %w in %s", name, team.ErrExists, s.Where)
			} else if !errors.Is(err, team.ErrNotFound) {
				return fmt.Errorf("create team %s: %w", name, err)
			}
			cwd, _ := a.Getwd()
			c, err := team.Create(ctx, s.Teams, team.CreateOptions{
				Name:        name,
				Description: description,
				LeadType:    team.LeadName,
				Cwd:         cwd,
				Now:         a.Now(),
				Pick:        rand.IntN,
			})
			if err != nil {
				return err
			}
			if a.JSON {
				return a.PrintJSON(c)
			}
			_, err = fmt.Fprintf(a.Stdout, "created team %s (lead %s) in %s\n", c.Name, c.LeadAgentID, s.Where)
			return err
		},
	}
	cmd.Flags().StringVarP(&description, "description", "d", "", "`TEXT` saying what the team is for")
	return cmd
}

// Deleted is the JSON answer of a delete or remove command.
type Deleted struct {
	Team    string `json:"team"`
	Deleted bool   `json:"deleted,omitempty"`
	Removed string `json:"removed,omitempty"`
}

func (a *app) teamDeleteCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a team with its inboxes and task list",
		Long: `Delete a team with its inboxes and task list.

A team whose members (other than the lead) are marked active is not
deleted: shut them down first, or pass --force when its lead is gone
(a crash, a kill -9): --force first stops the team's teammate processes
still running on this host and kills what they and the dead lead left
running (their recorded process groups, <home>/procs); it refuses while
the team's lead still runs.`,
		Args: cli.Positional("NAME"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			s, err := a.Open()
			if err != nil {
				return err
			}
			defer s.Done(&err)
			ctx := cmd.Context()
			c, err := s.Team(ctx, "NAME", args[0])
			if err != nil {
				return err
			}
			if force {
				if err := a.stopTeam(c); err != nil {
					return err
				}
				err = s.Teams.Delete(ctx, c.Name, func(team.Config) error { return nil })
			} else {
				err = team.Delete(ctx, s.Teams, c.Name)
			}
			if err != nil {
				if errors.Is(err, team.ErrActive) {
					return fmt.Errorf("delete team %s: %w (or pass --force)", c.Name, err)
				}
				return fmt.Errorf("delete team %s: %w", c.Name, err)
			}
			if a.JSON {
				return a.PrintJSON(Deleted{Team: c.Name, Deleted: true})
			}
			_, err = fmt.Fprintf(a.Stdout, "deleted team %s\n", c.Name)
			return err
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "delete even while members are marked active, stopping what remains of a team whose lead is gone")
	return cmd
}

func (a *app) teamAddCommand() *cobra.Command {
	var m team.Member
	cmd := &cobra.Command{
		Use:   "add TEAM MEMBER",
		Short: "Add a member to a team's roster",
		Long: `Add a member to a team's roster. No process is started: the member is
recorded as idle, so that messages can be addressed to it and tasks
claimed by it.`,
		Args: cli.Positional("TEAM", "MEMBER"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := team.ValidateAgentName(args[1], false); err != nil {
				return cli.Usagef("MEMBER: %w", err)
			}
			if err := cli.CheckColor(m.Color); err != nil {
				return err
			}
			if m.Cwd == "" {
				m.Cwd, _ = a.Getwd()
			} else if m.Cwd, err = a.checkDir("--cwd", m.Cwd); err != nil {
				return err
			}
			s, err := a.Open()
			if err != nil {
				return err
			}
			defer s.Done(&err)
			ctx := cmd.Context()
			c, err := s.Team(ctx, "TEAM", args[0])
			if err != nil {
				return err
			}
			m.Name = args[1]
			if old, ok := c.Member(m.Name); ok {
				return a.updateMember(cmd, s.Teams, c.Name, *old, m)
			}
			idle := false
			m.IsActive = &idle
			added, err := team.AddMember(ctx, s.Teams, c.Name, m, a.Now())
			if err != nil {
				return err
			}
			if a.JSON {
				return a.PrintJSON(added)
			}
			_, err = fmt.Fprintf(a.Stdout, "added %s to team %s (color %s)\n", added.AgentID, c.Name, cli.Cell(added.Color))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&m.Model, "model", "", "`MODEL` the member runs")
	f.StringVar(&m.Color, "color", "", "display `COLOR` (default: the next free one of "+strings.Join(team.Palette[1:], ", ")+")")
	f.StringVar(&m.AgentType, "agent-type", "", "agent `TYPE`, such as general-purpose")
	f.StringVar(&m.Cwd, "cwd", "", "working `DIR` (default: the current one)")
	return cmd
}

// updateMember is team add for an existing member: the flags given change
// it ("updated"); with none, the command refuses, naming the member, rather
// than report an add that changed nothing.
func (a *app) updateMember(cmd *cobra.Command, teams team.Store, teamName string, old, m team.Member) error {
	var changes []string
	set := func(flag string, dst *string, v string) {
		if cmd.Flags().Changed(flag) && *dst != v {
			*dst = v
			changes = append(changes, flag+" "+cli.Cell(v))
		}
	}
	if !slices.ContainsFunc([]string{"model", "color", "agent-type", "cwd"}, cmd.Flags().Changed) {
		return fmt.Errorf("team add: %s is already a member of team %s (%s, color %s, model %s); give --model, --color, --agent-type or --cwd to change it",
			cli.Cell(old.Name), cli.Cell(teamName), cli.Cell(old.AgentID), cli.Cell(old.Color), cli.Cell(old.Model))
	}
	updated, err := team.UpdateMember(cmd.Context(), teams, teamName, old.Name, func(mm *team.Member) error {
		set("model", &mm.Model, m.Model)
		set("color", &mm.Color, m.Color)
		set("agent-type", &mm.AgentType, m.AgentType)
		set("cwd", &mm.Cwd, m.Cwd)
		return nil
	})
	if err != nil {
		return err
	}
	if a.JSON {
		return a.PrintJSON(updated)
	}
	if len(changes) == 0 {
		_, err = fmt.Fprintf(a.Stdout, "%s in team %s already has those settings; nothing changed\n", updated.AgentID, cli.Cell(teamName))
		return err
	}
	_, err = fmt.Fprintf(a.Stdout, "updated %s in team %s: %s\n", updated.AgentID, cli.Cell(teamName), strings.Join(changes, ", "))
	return err
}

// checkColor refuses a --color outside the palette; "" means the default.

// checkDir returns dir made absolute (relative to the working folder), or
// a usage error naming flag if it is not an existing folder, as the
// headless run and the worker check their --cwd.
func (a *app) checkDir(flag, dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		wd, err := a.Getwd()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(wd, dir)
	}
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", cli.Usagef("%s %s: not a folder", flag, dir)
	}
	return dir, nil
}

// openMember opens the stores and loads team teamName, checking that
// member is on its roster; on an error nothing is left open, otherwise the
// caller closes the stores with Done.
func (a *app) openMember(ctx context.Context, teamName, member string) (*cli.Opened, team.Config, error) {
	s, err := a.Open()
	if err != nil {
		return nil, team.Config{}, err
	}
	c, err := s.Team(ctx, "TEAM", teamName)
	if err == nil {
		err = cli.Member(c, "MEMBER", member)
	}
	if err != nil {
		_ = s.Release() // the lookup error is the one to report
		return nil, team.Config{}, err
	}
	return s, c, nil
}

func (a *app) teamRemoveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "remove TEAM MEMBER",
		Short: "Remove a member from a team's roster",
		Args:  cli.Positional("TEAM", "MEMBER"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			ctx := cmd.Context()
			s, c, err := a.openMember(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			defer s.Done(&err)
			if err := team.RemoveMember(ctx, s.Teams, c.Name, args[1]); err != nil {
				return err
			}
			if a.JSON {
				return a.PrintJSON(Deleted{Team: c.Name, Removed: args[1]})
			}
			_, err = fmt.Fprintf(a.Stdout, "removed %s from team %s\n", args[1], c.Name)
			return err
		},
	}
}
