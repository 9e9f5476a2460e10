package task

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/internal/gitenv"
	"github.com/troupe-dev/troupe/internal/procgroup"
)

// ShellSpec is a command to run in the background.
type ShellSpec struct {
	// ID is the task id; "" gets a fresh one. A given id must be of type
	// local_bash and not in use.
	ID          ID
	Command     string
	Description string
	ToolUseID   string
	// AgentID is the agent that started it; KillForAgent(AgentID) stops it.
	AgentID string
	Kind    string // "bash" (default) or "monitor"
	// Quiet keeps its end from the model: the monitor that runs it tells
	// the agent instead (CommandSource).
	Quiet bool
	Dir   string   // working directory; "" is the current one
	Env   []string // nil inherits the environment
}

// OutputPath returns the output file of task id in the output folder dir.
func OutputPath(dir string, id ID) string { return filepath.Join(dir, string(id)+".output") }

// drainWait bounds how long output is read after the shell exited: a
// process that left its group may hold the pipe open.
const drainWait = 500 * time.Millisecond

// killWait bounds how long a kill waits for the process group to vanish.
const killWait = 5 * time.Second

// StartShell starts spec.Command with "<Shell> -c" in its own process group,
// stdout and stderr into the task's output file, and registers it as a
// running local_bash task. The exit code is recorded when it ends
// (completed on 0, failed otherwise, killed when stopped), then the model
// is notified; once the shell exits, what is left of its process group is
// killed. A stall watchdog tells the model, once, when the output stopped
// growing for Config.StallAfter and the last line looks like a prompt.
//
// If the output file cannot be opened (a symlink planted at its path, for
// one) or the shell cannot start, the task is registered as failed,
// notified, and the error returned with it.
func (r *Registry) StartShell(spec ShellSpec) (State, error) {
	if r.cfg.Dir == "" {
		return State{}, errors.New("start shell: registry has no output dir")
	}
	if spec.Kind == "" {
		spec.Kind = "bash"
	}
	id := spec.ID
	if id == "" {
		id = NewID(LocalBash)
	} else if id.TypeOf() != LocalBash {
		return State{}, fmt.Errorf("start shell: %w: id %q is not a local_bash id", ErrBadDetail, id)
	} else if _, ok := r.Get(id); ok {
		return State{}, fmt.Errorf("start shell %s: %w", id, ErrExists)
	}
	s := State{
		ID: id, Type: LocalBash, Status: Pending, Description: spec.Description,
		ToolUseID: spec.ToolUseID, OutputFile: OutputPath(r.cfg.Dir, id),
		Detail: &Shell{Command: spec.Command, AgentID: spec.AgentID, Kind: spec.Kind},
	}
	fail := func(err error) (State, error) {
		if _, rerr := r.Register(s, nil); rerr != nil {
			return State{}, errors.Join(err, rerr)
		}
		finish := r.Finish
		if spec.Quiet {
			finish = r.FinishQuietly
		}
		st, _ := finish(id, Failed, func(s State) State {
			s.Detail = s.Detail.(*Shell).With(func(c *Shell) { c.Error = err.Error() })
			return s
		})
		return st, err
	}
	out, err := OpenOutput(s.OutputFile, r.cfg.MaxOutput)
	if err != nil {
		return fail(fmt.Errorf("start shell: %w", err))
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		out.Close()
		return fail(fmt.Errorf("start shell: %w", err))
	}
	growPipe(pr)
	cmd := exec.Command(r.cfg.Shell, "-c", spec.Command)
	cmd.Dir, cmd.Env = spec.Dir, gitenv.Env(spec.Env) // no repository's fsmonitor or hooks run
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = pw, pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		out.Close()
		return fail(fmt.Errorf("start shell: %w", err))
	}
	pgid := cmd.Process.Pid
	// In the process's ledger until the group is gone: if this process
	// dies first, whoever reaps it kills the group (procgroup.Reap).
	forget := procgroup.Track(pgid)
	s.Status = Running
	s.Detail = s.Detail.(*Shell).With(func(c *Shell) { c.PID = pgid })
	kill := func(context.Context, State) error { return killGroup(pgid) }
	if s, err = r.Register(s, kill); err != nil {
		killGroup(pgid)
		forget()
		cmd.Wait()
		pr.Close()
		out.Close()
		return State{}, fmt.Errorf("start shell: %w", err)
	}

	captured := make(chan struct{})
	exited := make(chan struct{})
	okCapture := r.goFunc(func(context.Context) {
		defer close(captured)
		out.Capture(pr)
	})
	okWait := okCapture && r.goFunc(func(context.Context) {
		defer close(exited)
		r.waitShell(id, cmd, pgid, pr, out, captured, spec.Quiet)
		forget()
	})
	if !okWait {
		// Close began between Register and here: Close stops the task.
		killGroup(pgid)
		forget()
		if !okCapture {
			close(captured)
		}
		close(exited)
		cmd.Wait()
		pr.Close()
		out.Close()
		st, _ := r.Get(id)
		return st, ErrClosed
	}
	r.goFunc(func(ctx context.Context) { r.watchStall(ctx, id, out, exited) })
	return s, nil
}

// waitShell waits for the shell, kills what is left of its group, drains
// the output and finishes the task.
func (r *Registry) waitShell(id ID, cmd *exec.Cmd, pgid int, pr *os.File, out *Output, captured <-chan struct{}, quiet bool) {
	werr := cmd.Wait()
	syscall.Kill(-pgid, syscall.SIGKILL) // leftovers of the group; ESRCH when none
	select {
	case <-captured:
	case <-time.After(drainWait):
		pr.SetReadDeadline(time.Now())
		<-captured
	}
	pr.Close()
	out.Close()
	code := exitCode(werr)
	tail := NotificationTail(out.Path())
	to := Completed
	if code != 0 {
		to = Failed
	}
	// A stop under way turns the end into Killed (Registry.finish).
	record := func(s State) State {
		if sh, ok := s.Detail.(*Shell); ok && !sh.Exited {
			s.Detail = sh.With(func(c *Shell) { c.Exited, c.ExitCode, c.Tail = true, code, tail })
		}
		return s
	}
	finish := r.Finish
	if quiet {
		finish = r.FinishQuietly
	}
	if _, err := finish(id, to, record); err != nil {
		// Stop finished it first: record the exit code, and say nothing.
		r.Update(id, record)
	}
}

// exitCode returns a shell's exit code, 128+n for signal n.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return -1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// killGroup sends SIGKILL to process group pgid and waits (up to killWait)
// until none of its processes is left.
func killGroup(pgid int) error {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	deadline := time.Now().Add(killWait)
	for delay := time.Millisecond; time.Now().Before(deadline); delay = min(2*delay, 20*time.Millisecond) {
		if !groupAlive(pgid) {
			return nil
		}
		time.Sleep(delay)
	}
	return fmt.Errorf("kill process group %d: still alive after %v", pgid, killWait)
}

// groupAlive reports whether any process of group pgid is left, zombies
// excluded: the shell itself stays a zombie until its waiter reaps it.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false
	}
	return groupHasLive(pgid)
}

// watchStall is the stall watchdog of shell task id: every StallInterval
// it checks the output size, and tells the model once when the output has
// not grown for StallAfter and the last line looks like a prompt.
func (r *Registry) watchStall(ctx context.Context, id ID, out *Output, done <-chan struct{}) {
	t := r.clock.NewTicker(r.cfg.StallInterval)
	defer t.Stop()
	w := stallWatch{lastGrowth: r.clock.Now()}
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-t.C():
		}
		size := out.Size()
		var suspect bool
		if w, suspect = w.check(size, r.clock.Now(), r.cfg.StallAfter); !suspect {
			continue
		}
		tail, err := ReadOutput(out.Path(), max(0, size-stallTail), stallTail)
		if err != nil || !LooksLikePrompt(tail) {
			continue
		}
		w.told = true
		r.tellStalled(id, LastLine(tail))
	}
}

// tellStalled marks task id stalled and emits EventStalled, if it is
// still running and was not told before.
func (r *Registry) tellStalled(id ID, last []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.tasks[id]
	sh, isShell := s.Detail.(*Shell)
	if !ok || !isShell || s.Status != Running || sh.Stalled {
		return
	}
	s.Detail = sh.With(func(c *Shell) { c.Stalled = true })
	r.tasks[id] = s
	n := stallNotification(s, last)
	r.emitLocked(Event{Kind: EventStalled, State: s, Summary: n.Summary, Notification: n.XML()})
}
