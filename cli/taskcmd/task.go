// Package taskcmd is `troupe task`: list, create, get, update, claim and
// release the tasks of a team in the store, for people and scripts.
package taskcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).taskCommand() }

func (a *app) taskCommand() *cobra.Command {
	return cli.Group("task", "List, create, get, update and claim the tasks of a team",
		a.taskListCommand(),
		a.taskCreateCommand(),
		a.taskGetCommand(),
		a.taskUpdateCommand(),
		a.taskClaimCommand(),
		a.taskReleaseCommand(),
	)
}

// openList opens the stores and the task list of the team named by --team.
func (a *app) openList(ctx context.Context, teamName string) (*cli.Opened, team.Config, *tasklist.List, error) {
	s, c, err := a.OpenTeam(ctx, teamName)
	if err != nil {
		return nil, team.Config{}, nil, err
	}
	return s, c, tasklist.New(s.Tasks, c.Name), nil
}

func (a *app) taskListCommand() *cobra.Command {
	var teamName string
	cmd := &cobra.Command{
		Use:   "list --team T",
		Short: "List a team's tasks",
		Args:  cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			s, _, l, err := a.openList(cmd.Context(), teamName)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			tasks, terr := l.Tasks(cmd.Context())
			if terr != nil && !errors.Is(terr, tasklist.ErrCorrupt) {
				return fmt.Errorf("list tasks of team %s: %w", l.Name(), terr)
			}
			if a.JSON {
				if tasks == nil {
					tasks = []tasklist.Task{}
				}
				err = a.PrintJSON(tasks)
			} else if len(tasks) == 0 {
				_, err = fmt.Fprintln(a.Stdout, "no tasks")
			} else {
				w := a.Table()
				cli.Row(w, "ID", "STATUS", "OWNER", "BLOCKED BY", "SUBJECT")
				for _, t := range tasks {
					status := string(t.Status)
					if tasklist.Claimable(t, tasks) {
						status += " (ready)"
					}
					cli.Row(w, t.ID, status, t.Owner, cli.IDs(tasklist.OpenBlockers(t, tasks)), t.Subject)
				}
				err = w.Flush()
			}
			if err != nil {
				return err
			}
			return terr // unreadable tasks: the rest were listed
		},
	}
	cmd.Flags().StringVar(&teamName, "team", "", "`NAME` of the team")
	_ = cmd.MarkFlagRequired("team")
	return cmd
}

func (a *app) taskCreateCommand() *cobra.Command {
	var teamName string
	var d tasklist.Draft
	var meta []string
	cmd := &cobra.Command{
		Use:   "create --team T --subject S",
		Short: "Create a pending task",
		Args:  cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if strings.TrimSpace(d.Subject) == "" {
				return cli.Usagef("--subject: empty")
			}
			if d.Blocks, err = cleanIDs("--blocks", d.Blocks); err != nil {
				return err
			}
			if d.BlockedBy, err = cleanIDs("--blocked-by", d.BlockedBy); err != nil {
				return err
			}
			if d.Metadata, err = parseMetadata(meta); err != nil {
				return err
			}
			ctx := cmd.Context()
			s, c, l, err := a.openList(ctx, teamName)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			if d.Owner != "" {
				if err := cli.Member(c, "--owner", d.Owner); err != nil {
					return err
				}
			}
			t, err := l.Create(ctx, d)
			if err != nil {
				return err
			}
			if a.JSON {
				return a.PrintJSON(t)
			}
			_, err = fmt.Fprintf(a.Stdout, "created task %s: %s\n", t.ID, termtext.Line(t.Subject))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&teamName, "team", "", "`NAME` of the team")
	f.StringVar(&d.Subject, "subject", "", "what is to be done, in a few words (`TEXT`)")
	f.StringVar(&d.Description, "description", "", "what is to be done, in full (`TEXT`)")
	f.StringVar(&d.ActiveForm, "active-form", "", "`TEXT` shown while the task is in progress, such as \"Running tests\"")
	f.StringVar(&d.Owner, "owner", "", "`NAME` of the member that owns the task")
	f.StringSliceVar(&d.Blocks, "blocks", nil, "`IDS` of tasks this task blocks (comma-separated)")
	f.StringSliceVar(&d.BlockedBy, "blocked-by", nil, "`IDS` of tasks that block this task (comma-separated)")
	f.StringArrayVar(&meta, "metadata", nil, "metadata entry `KEY=JSON` (repeatable)")
	_ = cmd.MarkFlagRequired("team")
	_ = cmd.MarkFlagRequired("subject")
	return cmd
}

func (a *app) taskGetCommand() *cobra.Command {
	var teamName string
	cmd := &cobra.Command{
		Use:   "get --team T ID",
		Short: "Show one task",
		Args:  cli.Positional("ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			id := args[0]
			if err := checkID("ID", id); err != nil {
				return err
			}
			ctx := cmd.Context()
			s, c, l, err := a.openList(ctx, teamName)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			t, err := l.Get(ctx, id)
			if errors.Is(err, tasklist.ErrNotFound) {
				return cli.Describef(err, "no task %s in team %s", id, c.Name)
			}
			if err != nil {
				return err
			}
			if a.JSON {
				return a.PrintJSON(t)
			}
			tasks, _ := l.Tasks(ctx) // for the open blockers only
			w := a.Table()
			cli.Row(w, "ID:", t.ID)
			cli.Row(w, "Subject:", t.Subject)
			cli.Row(w, "Status:", string(t.Status))
			cli.Row(w, "Owner:", t.Owner)
			if t.ActiveForm != "" {
				cli.Row(w, "Active form:", t.ActiveForm)
			}
			cli.Row(w, "Blocks:", cli.IDs(t.Blocks))
			blocked := cli.IDs(t.BlockedBy)
			if open := tasklist.OpenBlockers(t, tasks); len(open) > 0 {
				blocked += " (open: " + cli.IDs(open) + ")"
			}
			cli.Row(w, "Blocked by:", blocked)
			for i, kv := range cli.MetadataLines(t.Metadata) {
				label := ""
				if i == 0 {
					label = "Metadata:"
				}
				fmt.Fprintf(w, "%s\t%s\n", label, cli.Cell(kv))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if t.Description != "" {
				_, err = fmt.Fprintf(a.Stdout, "\n%s\n", termtext.Clean(t.Description))
			}
			return err
		},
	}
	cmd.Flags().StringVar(&teamName, "team", "", "`NAME` of the team")
	_ = cmd.MarkFlagRequired("team")
	return cmd
}

// Updated is the JSON answer of task update.
type Updated struct {
	Task    tasklist.Task   `json:"task"`
	Updated []string        `json:"updated"`
	From    tasklist.Status `json:"from,omitempty"`
	Deleted bool            `json:"deleted,omitempty"`
}

func (a *app) taskUpdateCommand() *cobra.Command {
	var teamName, subject, description, activeForm, status, owner string
	var u tasklist.Update
	var meta []string
	cmd := &cobra.Command{
		Use:   "update --team T ID",
		Short: "Change a task: its fields, status, owner, dependencies or metadata",
		Long: `Change a task. Only the flags given are applied. --status deleted deletes
the task; --owner "" clears the owner; --metadata KEY=null deletes a key.
A task is not completed while a task that blocks it is open.`,
		Args: cli.Positional("ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			id := args[0]
			if err := checkID("ID", id); err != nil {
				return err
			}
			if err := updateFromFlags(cmd.Flags(), &u, meta, map[string]*string{"subject": &subject, "description": &description,
				"active-form": &activeForm, "owner": &owner, "status": &status}); err != nil {
				return err
			}
			ctx := cmd.Context()
			s, c, l, err := a.openList(ctx, teamName)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			if u.Owner != nil && *u.Owner != "" {
				if err := cli.Member(c, "--owner", *u.Owner); err != nil {
					return err
				}
			}
			res, err := l.Update(ctx, id, u)
			if errors.Is(err, tasklist.ErrNotFound) {
				// The task itself, or a task named by a new edge?
				if _, gerr := l.Get(ctx, id); errors.Is(gerr, tasklist.ErrNotFound) {
					return cli.Describef(err, "no task %s in team %s", id, c.Name)
				}
			}
			if err != nil {
				return err
			}
			return a.printUpdated(id, res)
		},
	}
	f := cmd.Flags()
	f.StringVar(&teamName, "team", "", "`NAME` of the team")
	f.StringVar(&subject, "subject", "", "new subject `TEXT`")
	f.StringVar(&description, "description", "", "new description `TEXT`")
	f.StringVar(&activeForm, "active-form", "", "new in-progress `TEXT`")
	f.StringVar(&status, "status", "", "new `STATUS`: pending, in_progress, completed or deleted")
	f.StringVar(&owner, "owner", "", "`NAME` of the new owner, a member (\"\" clears it)")
	f.StringSliceVar(&u.AddBlocks, "add-blocks", nil, "`IDS` of tasks this task now blocks (comma-separated)")
	f.StringSliceVar(&u.AddBlockedBy, "add-blocked-by", nil, "`IDS` of tasks that now block this task (comma-separated)")
	f.StringArrayVar(&meta, "metadata", nil, "merge metadata entry `KEY=JSON`; KEY=null deletes the key (repeatable)")
	_ = cmd.MarkFlagRequired("team")
	return cmd
}

// updateFromFlags fills u from the flags of troupe task update that were
// given (v holds their values by name) and checks them.
func updateFromFlags(f *pflag.FlagSet, u *tasklist.Update, meta []string, v map[string]*string) (err error) {
	for name, set := range map[string]struct {
		dst **string
		v   *string
	}{
		"subject": {&u.Subject, v["subject"]}, "description": {&u.Description, v["description"]},
		"active-form": {&u.ActiveForm, v["active-form"]}, "owner": {&u.Owner, v["owner"]},
	} {
		if f.Changed(name) {
			*set.dst = set.v
		}
	}
	if u.Subject != nil && strings.TrimSpace(*u.Subject) == "" {
		return cli.Usagef("--subject: empty")
	}
	if f.Changed("status") {
		st := tasklist.Status(*v["status"])
		if !st.Valid() && st != tasklist.StatusDeleted {
			return cli.Usagef("--status %q: want pending, in_progress, completed or deleted", *v["status"])
		}
		u.Status = &st
	}
	if u.AddBlocks, err = cleanIDs("--add-blocks", u.AddBlocks); err != nil {
		return err
	}
	if u.AddBlockedBy, err = cleanIDs("--add-blocked-by", u.AddBlockedBy); err != nil {
		return err
	}
	if u.Metadata, err = parseMetadata(meta); err != nil {
		return err
	}
	return nil
}

// printUpdated says what troupe task update changed.
func (a *app) printUpdated(id string, res tasklist.Result) (err error) {
	if a.JSON {
		if res.Updated == nil {
			res.Updated = []string{}
		}
		return a.PrintJSON(Updated{Task: res.Task, Updated: res.Updated, From: res.From, Deleted: res.Deleted})
	}
	switch {
	case res.Deleted:
		_, err = fmt.Fprintf(a.Stdout, "deleted task %s\n", id)
	case len(res.Updated) == 0:
		_, err = fmt.Fprintf(a.Stdout, "task %s: nothing changed\n", id)
	default:
		changes := append([]string(nil), res.Updated...)
		for i, n := range changes {
			if n == "status" && res.From != "" {
				changes[i] = fmt.Sprintf("status %s -> %s", res.From, res.Task.Status)
			}
		}
		_, err = fmt.Fprintf(a.Stdout, "updated task %s: %s\n", id, strings.Join(changes, ", "))
	}
	return err
}

func (a *app) taskClaimCommand() *cobra.Command {
	var teamName, agent string
	cmd := &cobra.Command{
		Use:   "claim --team T --agent NAME [ID]",
		Short: "Claim a task for a member: the given one, or the first ready one",
		Long: `Claim a task for a member: it becomes in_progress and owned by the member.
Without ID, the first ready task (pending, unowned, every blocker
completed) is claimed. With ID, that task is claimed unless it does not
exist, is claimed by someone else, is completed, or is blocked.`,
		Args: cli.Positional("[ID]"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if len(args) == 1 {
				if err := checkID("ID", args[0]); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			s, c, l, err := a.openList(ctx, teamName)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			if err := cli.Member(c, "--agent", agent); err != nil {
				return err
			}
			var t tasklist.Task
			if len(args) == 0 {
				t, err = l.Claim(ctx, agent)
				if errors.Is(err, tasklist.ErrNoneReady) {
					return cli.Describef(err, "no task in team %s is ready to claim (pending, unowned, with every blocker completed)", c.Name)
				}
			} else {
				t, err = l.ClaimTask(ctx, args[0], agent)
				err = claimError(err, args[0], c.Name)
			}
			if err != nil {
				return err
			}
			if a.JSON {
				return a.PrintJSON(t)
			}
			_, err = fmt.Fprintf(a.Stdout, "%s claimed task %s: %s\n", agent, t.ID, termtext.Line(t.Subject))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&teamName, "team", "", "`NAME` of the team")
	f.StringVar(&agent, "agent", "", "`NAME` of the member that claims the task")
	_ = cmd.MarkFlagRequired("team")
	_ = cmd.MarkFlagRequired("agent")
	return cmd
}

// claimError gives each reason a claim of task id was refused its own
// message.
func claimError(err error, id, teamName string) error {
	var claimed *tasklist.ClaimedError
	var blocked *tasklist.BlockedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &claimed):
		return cli.Describef(err, "task %s is already claimed by %s", id, claimed.Owner)
	case errors.As(err, &blocked):
		return cli.Describef(err, "task %s is blocked by open task(s) %s", id, cli.IDs(blocked.Blockers))
	case errors.Is(err, tasklist.ErrCompleted):
		return cli.Describef(err, "task %s is already completed", id)
	case errors.Is(err, tasklist.ErrNotFound):
		return cli.Describef(err, "no task %s in team %s", id, teamName)
	}
	return err
}

func (a *app) taskReleaseCommand() *cobra.Command {
	var teamName, agent string
	cmd := &cobra.Command{
		Use:   "release --team T --agent NAME",
		Short: "Return a member's unfinished tasks to pending, unowned",
		Args:  cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if agent == "" {
				return cli.Usagef("--agent: empty name")
			}
			ctx := cmd.Context()
			s, c, l, err := a.openList(ctx, teamName)
			if err != nil {
				return err
			}
			defer s.Done(&err)
			// The member may have been removed already: its tasks still need
			// releasing, so the roster is not checked.
			tasks, err := l.Release(ctx, agent)
			if err != nil {
				return err
			}
			if a.JSON {
				if tasks == nil {
					tasks = []tasklist.Task{}
				}
				return a.PrintJSON(tasks)
			}
			if len(tasks) == 0 {
				_, err = fmt.Fprintf(a.Stdout, "%s holds no unfinished tasks in team %s\n", agent, c.Name)
				return err
			}
			released := make([]string, len(tasks))
			for i, t := range tasks {
				released[i] = t.ID
			}
			_, err = fmt.Fprintf(a.Stdout, "released task(s) %s of %s\n", cli.IDs(released), agent)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&teamName, "team", "", "`NAME` of the team")
	f.StringVar(&agent, "agent", "", "`NAME` of the member whose tasks to release")
	_ = cmd.MarkFlagRequired("team")
	_ = cmd.MarkFlagRequired("agent")
	return cmd
}

// checkID refuses what is not a task id, naming the argument.
func checkID(arg, id string) error {
	if !tasklist.ValidID(id) {
		return cli.Usagef("%s %q: not a task id (ids are positive whole numbers)", arg, id)
	}
	return nil
}

// cleanIDs trims the ids of a comma-separated flag and checks them.
func cleanIDs(flag string, list []string) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, id := range list {
		id = strings.TrimSpace(id)
		if err := checkID(flag, id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// parseMetadata parses KEY=JSON entries; a later entry for a key wins.
func parseMetadata(entries []string) (map[string]json.RawMessage, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(entries))
	for _, e := range entries {
		k, v, ok := strings.Cut(e, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, cli.Usagef("--metadata %q: want KEY=JSON", e)
		}
		if !json.Valid([]byte(v)) {
			return nil, cli.Usagef("--metadata %q: value of %s is not JSON (quote strings: %s='\"text\"')", e, k, k)
		}
		out[k] = json.RawMessage(v)
	}
	return out, nil
}
