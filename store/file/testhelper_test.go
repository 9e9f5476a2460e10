package file_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/internal/logtest"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// Child processes: a test re-executes its own binary with ftChildEnv set to
// a JSON ftChildSpec and -test.run selecting TestTaskFTChild, which plays
// the role named in the spec. A child reports on stdout in lines starting
// with "ft ", and may wait for "go" lines on stdin.

const ftChildEnv = "TROUPE_FT_CHILD"

// ftChildSpec tells a child process what to do.
type ftChildSpec struct {
	Role      string        `json:"role"`
	Root      string        `json:"root"`
	Name      string        `json:"name"` // team or task list
	Agent     string        `json:"agent,omitempty"`
	N         int           `json:"n,omitempty"`
	ID        string        `json:"id,omitempty"`
	LockStale time.Duration `json:"lockStale,omitempty"`
}

// ftChild is a running child process.
type ftChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // "ft " lines, prefix removed; closed at EOF

	stderr logtest.Buffer // also holds stdout's other lines
}

// Write collects the child's stderr (and stray stdout).
func (c *ftChild) Write(p []byte) (int, error) { return c.stderr.Write(p) }

func (c *ftChild) output() string { return c.stderr.String() }

// ftStartChild starts a child process playing spec.
func ftStartChild(t *testing.T, spec ftChildSpec) *ftChild {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	c := &ftChild{lines: make(chan string, 4096)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestTaskFTChild$", "-test.count=1", "-test.timeout=5m")
	c.cmd.Env = append(os.Environ(), ftChildEnv+"="+string(raw))
	c.cmd.Stderr = c
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "ft "); ok {
				c.lines <- line
			} else {
				fmt.Fprintln(c, sc.Text())
			}
		}
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-read
		c.cmd.Wait()
	})
	return c
}

// send writes one line to the child's stdin.
func (c *ftChild) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		t.Fatalf("send %q to child %d: %v\n%s", line, c.cmd.Process.Pid, err, c.output())
	}
}

// next returns the child's next report, failing the test if none comes
// within a minute.
func (c *ftChild) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			t.Fatalf("child %d exited early:\n%s", c.cmd.Process.Pid, c.output())
		}
		return line
	case <-time.After(time.Minute):
		t.Fatalf("child %d: no report within a minute:\n%s", c.cmd.Process.Pid, c.output())
		return ""
	}
}

// expect fails unless the child's next report is want.
func (c *ftChild) expect(t *testing.T, want string) {
	t.Helper()
	if got := c.next(t); got != want {
		t.Fatalf("child %d reported %q; want %q\n%s", c.cmd.Process.Pid, got, want, c.output())
	}
}

// wait waits for the child to exit successfully and returns its remaining
// reports.
func (c *ftChild) wait(t *testing.T) []string {
	t.Helper()
	var out []string
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-c.lines:
			if ok {
				out = append(out, line)
				continue
			}
			if err := c.cmd.Wait(); err != nil {
				t.Fatalf("child %d: %v\n%s", c.cmd.Process.Pid, err, c.output())
			}
			return out
		case <-timeout:
			t.Fatalf("child %d did not finish within 2 minutes:\n%s", c.cmd.Process.Pid, c.output())
		}
	}
}

// kill9 kills the child with SIGKILL and waits for it to go.
func (c *ftChild) kill9(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for range c.lines {
	}
	c.cmd.Wait()
}

// ftOpen opens a store on root, closed when the test ends.
func ftOpen(t testing.TB, root string, opts file.Options) *file.Store {
	t.Helper()
	s, err := file.Open(root, opts)
	if err != nil {
		t.Fatalf("Open(%s) = %v", root, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ftPick is a deterministic team.CreateOptions.Pick.
func ftPick(n int) int { return 0 }

// ftNewTeam creates a team called name with only its lead.
func ftNewTeam(t *testing.T, s *file.Store, name string) team.Config {
	t.Helper()
	c, err := team.Create(t.Context(), s.Teams(), team.CreateOptions{Name: name, SessionID: "sess", Cwd: "/tmp", Now: time.UnixMilli(1_700_000_000_000), Pick: ftPick})
	if err != nil {
		t.Fatalf("team.Create(%q) = %v", name, err)
	}
	if c.Name != name {
		t.Fatalf("team.Create(%q) made team %q", name, c.Name)
	}
	return c
}

// ftLeadConfig is a team file with only a lead, for Store.Create.
func ftLeadConfig(name string) team.Config {
	return team.Config{
		Name: name, CreatedAt: 1, LeadAgentID: team.LeadID(name),
		Members: []team.Member{{AgentID: team.LeadID(name), Name: team.LeadName, TmuxPaneID: team.PaneLeader, BackendType: team.BackendInProcess}},
	}
}

// ftClaimResult classifies the outcome of a claim for reports.
func ftClaimResult(err error) string {
	var ce *tasklist.ClaimedError
	switch {
	case err == nil:
		return "won"
	case errors.As(err, &ce):
		return "claimed"
	case errors.Is(err, tasklist.ErrNotFound):
		return "notfound: " + err.Error()
	default:
		return "error: " + err.Error()
	}
}

// TestTaskFTChild is the body of the child processes; it is skipped when
// run as a test.
func TestTaskFTChild(t *testing.T) {
	raw := os.Getenv(ftChildEnv)
	if raw == "" {
		t.Skip("helper process for the Team and Task tests")
	}
	var spec ftChildSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	s, err := file.Open(spec.Root, file.Options{LockStale: spec.LockStale})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	report := func(format string, args ...any) { fmt.Printf("ft "+format+"\n", args...) }
	stdin := bufio.NewScanner(os.Stdin)
	waitGo := func() bool { return stdin.Scan() && stdin.Text() == "go" }

	switch spec.Role {
	case "team-add": // add N members named <agent>-<i>
		report("ready")
		waitGo()
		for i := range spec.N {
			m := team.Member{Name: fmt.Sprintf("%s-%d", spec.Agent, i), Cwd: "/tmp"}
			if _, err := team.AddMember(ctx, s.Teams(), spec.Name, m, time.Now()); err != nil {
				report("error %v", err)
			}
		}
		report("done")
	case "team-add-each": // on each "go", add member <agent>-<i>
		report("ready")
		for i := 0; waitGo(); i++ {
			m := team.Member{Name: fmt.Sprintf("%s-%d", spec.Agent, i), Cwd: "/tmp"}
			if _, err := team.AddMember(ctx, s.Teams(), spec.Name, m, time.Now()); err != nil {
				report("error %v", err)
				continue
			}
			report("added %s", m.Name)
		}
	case "team-create": // create teams <name>-0 .. <name>-(N-1)
		report("ready")
		waitGo()
		for i := range spec.N {
			name := fmt.Sprintf("%s-%d", spec.Name, i)
			switch err := s.Teams().Create(ctx, ftLeadConfig(name)); {
			case err == nil:
				report("%s won", name)
			case errors.Is(err, team.ErrExists):
				report("%s exists", name)
			default:
				report("%s error %v", name, err)
			}
		}
	case "task-create": // create N tasks
		report("ready")
		waitGo()
		for i := range spec.N {
			task, _, err := s.Tasks().Create(ctx, spec.Name, tasklist.Task{Subject: fmt.Sprintf("%s %d", spec.Agent, i)})
			if err != nil {
				report("error %v", err)
				continue
			}
			report("id %s", task.ID)
		}
	case "task-claim": // on each "go <id>", claim task id
		l := tasklist.New(s.Tasks(), spec.Name)
		report("ready")
		for stdin.Scan() {
			id, ok := strings.CutPrefix(stdin.Text(), "go ")
			if !ok {
				break
			}
			_, err := l.ClaimTask(ctx, id, spec.Agent)
			report("%s %s", id, ftClaimResult(err))
		}
	case "task-drain": // claim and complete tasks until none is ready
		report("ready")
		waitGo()
		for _, id := range ftDrain(ctx, tasklist.New(s.Tasks(), spec.Name), spec.Agent, func(err error) { report("error %v", err) }) {
			report("done %s", id)
		}
	case "task-put-loop": // rewrite task ID forever
		task, rev, err := s.Tasks().Get(ctx, spec.Name, spec.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			task.ActiveForm = fmt.Sprintf("rewrite %d", i)
			task.Description = strings.Repeat(string(rune('a'+i%26)), spec.N)
			if rev, err = s.Tasks().Put(ctx, spec.Name, task, rev); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				report("ready")
			}
		}
	case "rewrite-in-place": // rewrite file Name in place N times under its lock, as Claude Code does
		data, err := os.ReadFile(spec.Name)
		if err != nil {
			t.Fatal(err)
		}
		report("ready")
		waitGo()
		for range spec.N {
			lk, err := lockfile.Acquire(ctx, spec.Name+".lock", lockfile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(spec.Name, os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(data[:len(data)/2])
			f.Write(data[len(data)/2:])
			f.Close()
			if err := lk.Release(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond) // pace it like a busy agent
		}
		report("done")
	case "task-hold-lock": // take the list lock (.lock.lock) and hold it until killed
		dir := filepath.Join(s.Root(), "tasks", spec.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := lockfile.Acquire(ctx, filepath.Join(dir, ".lock.lock"), lockfile.Options{Stale: spec.LockStale}); err != nil {
			t.Fatal(err)
		}
		report("locked")
		io.Copy(io.Discard, os.Stdin)
	default:
		t.Fatalf("unknown role %q", spec.Role)
	}
}

// ftDrain claims and completes tasks of l for agent until none is ready and
// returns the ids it completed. Unexpected errors go to fail.
func ftDrain(ctx context.Context, l *tasklist.List, agent string, fail func(error)) []string {
	var done []string
	completed := tasklist.StatusCompleted
	for {
		task, err := l.Claim(ctx, agent)
		if errors.Is(err, tasklist.ErrNoneReady) {
			return done
		}
		if err != nil {
			fail(err)
			return done
		}
		if task.Owner != agent {
			fail(fmt.Errorf("Claim returned task %s owned by %q", task.ID, task.Owner))
		}
		if _, err := l.Update(ctx, task.ID, tasklist.Update{Status: &completed}); err != nil {
			fail(err)
			return done
		}
		done = append(done, task.ID)
	}
}

// ftRewriteSameSize replaces the first from in the file at path with to,
// of the same length, writing the file in place (its inode kept) and
// setting its modification time back, as a copy tool might: only the
// change time then tells the two versions apart.
func ftRewriteSameSize(t *testing.T, path, from, to string) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Replace(old, []byte(from), []byte(to), 1)
	if len(data) != len(old) || bytes.Equal(data, old) {
		t.Fatalf("%s: no same-size change of %q to %q made", path, from, to)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
}
