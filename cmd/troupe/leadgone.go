package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// A pane teammate whose lead's process is gone (docs/teams.md): the lead
// gives its pane teammates its process (EnvLeadPID, "pid:start"); a
// teammate that finds it gone for EnvLeadGoneAfter (default
// DefaultLeadGoneAfter) stops its turn, releases its tasks, tells the
// lead's inbox (a resumed lead reads it) and exits.
const (
	EnvLeadPID           = "TROUPE_LEAD_PID"
	EnvLeadGoneAfter     = "TROUPE_LEAD_GONE_AFTER"
	DefaultLeadGoneAfter = 30 * time.Second
)

// leadGoneError is the cause that ends a teammate whose lead is gone.
type leadGoneError struct {
	pid   int
	after time.Duration
}

func (e *leadGoneError) Error() string {
	return fmt.Sprintf("its lead (process %d) has been gone for %v", e.pid, e.after)
}

// leadEnv returns the variables that tell a pane teammate its lead's
// process, and the grace it gives it.
func (a *app) leadEnv() map[string]string {
	me := procgroup.ProcessOf(os.Getpid())
	env := map[string]string{EnvLeadPID: fmt.Sprintf("%d:%d", me.PID, me.Start)}
	if v := a.Getenv(EnvLeadGoneAfter); v != "" {
		env[EnvLeadGoneAfter] = v
	}
	return env
}

// watchLead returns ctx ended with a *leadGoneError once the lead named
// by EnvLeadPID has been gone for the grace; stop ends the watch. Without
// EnvLeadPID (a Claude Code lead, a teammate started by hand) nothing is
// watched.
func (a *app) watchLead(ctx context.Context, errOut io.Writer) (context.Context, func()) {
	v := a.Getenv(EnvLeadPID)
	if v == "" {
		return ctx, func() {}
	}
	pidS, startS, _ := strings.Cut(v, ":")
	pid, err := strconv.Atoi(pidS)
	start, serr := strconv.ParseUint(startS, 10, 64)
	if err != nil || serr != nil || pid <= 0 {
		fmt.Fprintf(errOut, "troupe: %s=%q: want pid:start; the lead's process is not watched\n", EnvLeadPID, v)
		return ctx, func() {}
	}
	after := DefaultLeadGoneAfter
	if s := a.Getenv(EnvLeadGoneAfter); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			after = d
		} else {
			fmt.Fprintf(errOut, "troupe: %s=%q: want a positive duration (30s); using %v\n", EnvLeadGoneAfter, s, after)
		}
	}
	lead := procgroup.Owner{PID: pid, Start: start}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(min(after/4, time.Second))
		defer t.Stop()
		var since time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			switch {
			case lead.Runs():
				since = time.Time{}
			case since.IsZero():
				since = time.Now()
			case time.Since(since) >= after:
				cancel(&leadGoneError{pid: pid, after: after})
				return
			}
		}
	}()
	return ctx, func() { cancel(nil); <-done }
}

// leaveForGoneLead is what a teammate stopped by a gone lead does last:
// its tasks go back to the list, it is marked inactive, and the lead's
// inbox and the teammate's log say why.
func leaveForGoneLead(s Stores, teamName, name string, why error, errOut io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	released, err := tasklist.New(s.Tasks, teamName).Release(ctx, name)
	if err != nil {
		fmt.Fprintf(errOut, "teammate %s: release its tasks: %v\n", name, err)
	}
	if _, err := team.UpdateMember(ctx, s.Teams, teamName, name, func(m *team.Member) error {
		f := false
		m.IsActive = &f
		return nil
	}); err != nil && !errors.Is(err, team.ErrNotFound) {
		fmt.Fprintf(errOut, "teammate %s: mark it inactive: %v\n", name, err)
	}
	note := fmt.Sprintf("Teammate %s stopped: %v. It released %d task(s) and exited.", name, why, len(released))
	if _, err := s.Mail.Send(ctx, teamName, team.LeadName, mailbox.Message{From: name, Text: note, Summary: "stopped: its lead is gone"}); err != nil {
		fmt.Fprintf(errOut, "teammate %s: tell the lead's inbox: %v\n", name, err)
	}
	fmt.Fprintln(errOut, note)
}

// closeOwnPane closes the tmux pane this teammate runs in (from $TMUX and
// $TMUX_PANE, which tmux sets in every pane), as its lead would have: a
// dead lead's dedicated tmux server then ends with its last pane instead
// of keeping dead panes for ever. It is the teammate's very last act:
// tmux hangs up the pane's process. Outside tmux it does nothing.
func closeOwnPane(getenv func(string) string) {
	sock, _, _ := strings.Cut(getenv("TMUX"), ",")
	pane := getenv("TMUX_PANE")
	if sock == "" || !strings.HasPrefix(pane, "%") {
		return
	}
	_ = exec.Command("tmux", "-S", sock, "kill-pane", "-t", pane).Run()
}
