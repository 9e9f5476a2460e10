package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/dream"
	"github.com/troupe-dev/troupe/memory"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/task"
)

// dreamCommand is `troupe dream`: consolidate the project's memory now
// from the sessions since the last dream.
func (a *app) dreamCommand() *cobra.Command {
	var h headless
	var cwd string
	c := &cobra.Command{
		Use:   "dream",
		Short: "Consolidate the project's memory now from the transcripts of the sessions since the last dream",
		Long: `troupe dream runs a dream in the foreground: an agent reads the transcripts
of the sessions of the project in --cwd since the last dream and merges,
updates and prunes the project's memory folder (<home>/projects/<project>/memory:
MEMORY.md and topic files, loaded into the lead's system prompt). Its tools
read only that folder and the transcripts and write only memory files. It
fails while another session dreams; a dream that fails is due again.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := a.WorkDir(cwd)
			if err != nil {
				return err
			}
			return a.runDream(cmd.Context(), &h, dir)
		},
	}
	f := c.Flags()
	f.StringVar(&cwd, "cwd", "", "the project `DIR` (default the current folder)")
	h.model.Add(f)
	return c
}

func (a *app) runDream(ctx context.Context, h *headless, cwd string) error {
	home, err := a.Home()
	if err != nil {
		return err
	}
	model, err := h.model.Open(a.Getenv)
	if err != nil {
		return err
	}
	cfg := kit.Dream(home, cwd, "", model, h.model.Name)
	reg := task.New(task.Config{Dir: filepath.Join(os.TempDir(), "troupe-dream-"+memory.Slug(cwd)), PollInterval: -1})
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = reg.Close(cctx)
	}()
	sub := reg.Subscribe()
	defer sub.Close()
	id, err := dream.Start(reg, cfg)
	if errors.Is(err, dream.ErrNothing) {
		_, err = fmt.Fprintln(a.Stdout, "troupe dream: nothing to consolidate: no session of this project since the last dream")
		return err
	}
	if err != nil {
		return fmt.Errorf("dream: %w", err)
	}
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		if e.State.ID != id || e.Kind != task.EventTerminated {
			continue
		}
		if e.State.Status != task.Completed {
			return fmt.Errorf("dream %s %s: %s (memory unchanged on record: it is due again)", id, e.State.Status, e.State.Description)
		}
		_, err = fmt.Fprintf(a.Stdout, "troupe dream: %s in %s\n", e.State.Description, cfg.MemoryDir)
		return err
	}
}

// Defaults of the autoDream settings.
const (
	DefaultAutoDreamHours    = 24
	DefaultAutoDreamSessions = 5
)

// autoDream starts a dream in the session's task registry (where the
// "dreaming" pill and the task list show it, and TaskStop stops it) when
// the autoDream setting is on and one is due: autoDreamMinHours (default
// 24) since the last dream and autoDreamMinSessions (default 5) sessions
// of this project since. Problems are warnings: the session goes on.
func (a *app) autoDream(cwd, session string, h *headless, reg *task.Registry) {
	home, err := a.Home()
	if err != nil {
		return
	}
	files := settings.Files(home, cwd)
	on, _, err := settings.Key[bool](files, "autoDream")
	if err != nil {
		a.WarnOnce(err.Error())
		return
	}
	if !on {
		return
	}
	hours, _, err := settings.Key[float64](files, "autoDreamMinHours")
	if err != nil || hours <= 0 {
		hours = DefaultAutoDreamHours
	}
	minSessions, _, err := settings.Key[float64](files, "autoDreamMinSessions")
	if err != nil || minSessions <= 0 {
		minSessions = DefaultAutoDreamSessions
	}
	due, err := kit.DreamDue(home, cwd, session, a.Now(), time.Duration(hours*float64(time.Hour)), int(minSessions))
	if err != nil {
		a.WarnOnce(err.Error())
		return
	}
	if !due {
		return
	}
	if _, err := a.startDream(h, cwd, session, reg); err != nil && !errors.Is(err, dream.ErrBusy) && !errors.Is(err, dream.ErrNothing) {
		a.WarnOnce("autoDream: " + err.Error())
	}
}

// startDream starts a dream of the project in cwd as a task of reg.
func (a *app) startDream(h *headless, cwd, session string, reg *task.Registry) (task.ID, error) {
	home, err := a.Home()
	if err != nil {
		return "", err
	}
	model, err := h.model.Open(a.Getenv)
	if err != nil {
		return "", err
	}
	return dream.Start(reg, kit.Dream(home, cwd, session, model, h.model.Name))
}

// slashDream is /dream in the interactive lead: a dream in the session's
// task list (the "dreaming" pill), or why not.
func (a *app) slashDream(h *headless, cwd, session string, reg *task.Registry) string {
	id, err := a.startDream(h, cwd, session, reg)
	if err != nil {
		return "No dream: " + err.Error()
	}
	return fmt.Sprintf("Dreaming (task %s): consolidating this project's memory in the background; /tasks shows it.", id)
}
