package bash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/tool"
)

// testGrace keeps kill escalation quick in tests.
const testGrace = 200 * time.Millisecond

// newTool returns a Bash tool for tests, in a fresh directory.
func newTool(t *testing.T, cfg Config) *Tool {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.KillGrace == 0 {
		cfg.KillGrace = testGrace
	}
	return New(cfg)
}

// call runs one Bash call.
func call(ctx context.Context, tl *Tool, input string) (tool.Result, error) {
	return tl.Run(ctx, tool.Call{ID: "b1", Name: "Bash", Input: json.RawMessage(input)})
}

// mustRun runs one Bash call and fails the test on a Go error.
func mustRun(t *testing.T, tl *Tool, input string) tool.Result {
	t.Helper()
	res, err := call(t.Context(), tl, input)
	if err != nil {
		t.Fatalf("Run(%s) error = %v; want a Result", input, err)
	}
	return res
}

// cmd returns the input for command with optional extra fields.
func cmd(command string, extra ...any) string {
	m := map[string]any{"command": command}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestSpec(t *testing.T) {
	spec := New(Config{}).Spec()
	if spec.Name != "Bash" || spec.Description == "" || strings.Contains(spec.Description+string(spec.InputSchema), "{{") {
		t.Errorf("Spec() = %q, description %q; want Bash with filled-in text", spec.Name, spec.Description)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	var props, fields []string
	for p := range schema.Properties {
		props = append(props, p)
	}
	typ := reflect.TypeOf(input{})
	for i := range typ.NumField() {
		fields = append(fields, typ.Field(i).Tag.Get("json"))
	}
	slices.Sort(props)
	slices.Sort(fields)
	if !slices.Equal(props, fields) || !slices.Equal(schema.Required, []string{"command"}) {
		t.Errorf("schema properties %v, required %v; want %v, [command]", props, schema.Required, fields)
	}
	if !strings.Contains(string(spec.InputSchema), "max 600000") {
		t.Errorf("schema does not state the 600000 ms maximum: %s", spec.InputSchema)
	}
	if New(Config{}).ReadOnly(json.RawMessage(`{"command": "ls"}`)) {
		t.Error("ReadOnly(ls) = true; want false (the permission layer decides)")
	}
}

func TestRun(t *testing.T) {
	tl := newTool(t, Config{})
	tests := []struct {
		name    string
		input   string
		wantErr bool
		want    string // the whole content, or with a leading "~" a substring
	}{
		{"output and exit 0", cmd("echo hi"), false, "hi\n\nExit code: 0"},
		{"no output", cmd("true"), false, "(no output)\n\nExit code: 0"},
		{"exit code", cmd("echo out; exit 3"), true, "out\n\nExit code: 3"},
		{"stderr interleaved", cmd("echo a; echo b >&2; echo c; echo d >&2"), false, "a\nb\nc\nd\n\nExit code: 0"},
		{"stderr only", cmd("echo oops >&2; exit 1"), true, "oops\n\nExit code: 1"},
		{"no final newline", cmd("printf x"), false, "x\n\nExit code: 0"},
		{"killed by a signal", cmd("kill -9 $$"), true, "~Command killed by signal 9"},
		{"stdin is empty", cmd("cat; echo done"), false, "done\n\nExit code: 0"},
		{"float timeout", cmd("echo t", "timeout", 1500.5), false, "t\n\nExit code: 0"},
		{"description ignored", cmd("echo d", "description", "Print d"), false, "d\n\nExit code: 0"},
		{"background refused", cmd("touch ran", "run_in_background", true), true, "~run_in_background is not available yet"},
		{"missing command", `{}`, true, "~command is required"},
		{"blank command", cmd("  "), true, "~command is required"},
		{"command type", `{"command": 5}`, true, `~field "command" must be string`},
		{"timeout type", `{"command": "true", "timeout": "10"}`, true, `~field "timeout" must be float64`},
		{"unknown field", `{"command": "true", "cwd": "/"}`, true, `~unknown field "cwd"`},
		{"negative timeout", cmd("true", "timeout", -1), true, "~timeout must be a positive number"},
		{"not JSON", `{"command": `, true, "~invalid input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, tl, tt.input)
			if res.IsError != tt.wantErr {
				t.Errorf("Run(%s).IsError = %v; want %v; content:\n%s", tt.input, res.IsError, tt.wantErr, res.Content)
			}
			if sub, ok := strings.CutPrefix(tt.want, "~"); ok {
				if !strings.Contains(res.Content, sub) {
					t.Errorf("Run(%s) = %q; want it to contain %q", tt.input, res.Content, sub)
				}
			} else if res.Content != tt.want {
				t.Errorf("Run(%s) = %q; want %q", tt.input, res.Content, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(tl.cfg.Dir, "ran")); err == nil {
		t.Error("a run_in_background call ran its command")
	}
}

func TestBackground(t *testing.T) {
	type started struct{ command, description, toolUseID string }
	var got []started
	tl := newTool(t, Config{Background: func(ctx context.Context, command, description, toolUseID string) (string, string, error) {
		got = append(got, started{command, description, toolUseID})
		if command == "fail" {
			return "bfailed00", "", errors.New("no output dir")
		}
		return "b12345678", "/tmp/x/b12345678.output", nil
	}})
	if !strings.Contains(string(tl.Spec().InputSchema), "TaskOutput") || !strings.Contains(tl.Spec().Description, "TaskStop") {
		t.Errorf("with Background, the spec should describe TaskOutput and TaskStop")
	}
	res := mustRun(t, tl, cmd("touch ran", "run_in_background", true, "description", "Touch a file"))
	if res.IsError || !strings.Contains(res.Content, "ID: b12345678") || !strings.Contains(res.Content, "/tmp/x/b12345678.output") || !strings.Contains(res.Content, "TaskOutput") {
		t.Errorf("background Run = %+v; want the task id, output file and TaskOutput", res)
	}
	res = mustRun(t, tl, cmd("sleep 1", "run_in_background", true, "timeout", 5))
	if res.IsError || !strings.Contains(res.Content, "timeout does not apply") {
		t.Errorf("background Run with timeout = %+v; want a note on the timeout", res)
	}
	res = mustRun(t, tl, cmd("fail", "run_in_background", true))
	if !res.IsError || !strings.Contains(res.Content, "no output dir") || !strings.Contains(res.Content, "bfailed00") {
		t.Errorf("failed background Run = %+v; want the error and task id", res)
	}
	want := []started{{"touch ran", "Touch a file", "b1"}, {"sleep 1", "sleep 1", "b1"}, {"fail", "fail", "b1"}}
	if !slices.Equal(got, want) {
		t.Errorf("Background calls = %v; want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(tl.cfg.Dir, "ran")); err == nil {
		t.Error("a background call ran its command in the foreground")
	}
}

func TestDirEnvShell(t *testing.T) {
	dir := t.TempDir()
	tl := newTool(t, Config{Dir: dir, Env: []string{"FOO=bar", "PATH=" + os.Getenv("PATH")}})
	res := mustRun(t, tl, cmd(`pwd; echo "FOO=$FOO"`))
	if want := dir + "\nFOO=bar\n"; !strings.HasPrefix(res.Content, want) {
		t.Errorf("pwd and env = %q; want %q first", res.Content, want)
	}
	// Calls are independent: cd and export do not carry over.
	mustRun(t, tl, cmd("cd / && export FOO=changed"))
	if res := mustRun(t, tl, cmd(`pwd; echo "FOO=$FOO"`)); !strings.HasPrefix(res.Content, dir+"\nFOO=bar\n") {
		t.Errorf("after cd and export in an earlier call: %q; want the configured dir and env", res.Content)
	}
	sh := newTool(t, Config{Shell: "sh"})
	if res := mustRun(t, sh, cmd(`echo "$0"`)); !strings.HasPrefix(res.Content, "sh\n") {
		t.Errorf(`Shell sh: echo "$0" = %q; want sh`, res.Content)
	}
	bad := newTool(t, Config{Dir: filepath.Join(dir, "missing")})
	if res := mustRun(t, bad, cmd("true")); !res.IsError || !strings.Contains(res.Content, "cannot start") {
		t.Errorf("Run in a missing Dir = %+v; want an error Result saying it cannot start", res)
	}
}

func TestTimeoutClamp(t *testing.T) {
	tl := newTool(t, Config{MaxTimeout: time.Second})
	res := mustRun(t, tl, cmd("echo ok", "timeout", 5000))
	if res.IsError || !strings.Contains(res.Content, "timeout of 5000 ms was lowered to the maximum, 1000 ms") || !strings.Contains(res.Content, "ok\n") {
		t.Errorf("Run with timeout above the maximum = %+v; want it run with a note", res)
	}
}

func TestTruncation(t *testing.T) {
	tl := newTool(t, Config{MaxOutput: 100})
	res := mustRun(t, tl, cmd("seq 1 1000"))
	// seq 1 1000 writes 3893 bytes; 50 are kept at each end.
	if !strings.HasPrefix(res.Content, "1\n2\n3\n") || !strings.Contains(res.Content, "\n... [3793 bytes truncated] ...\n") ||
		!strings.Contains(res.Content, "999\n1000\n\nExit code: 0") {
		t.Errorf("truncated output = %q; want head, a note of 3793 bytes, tail and exit code", res.Content)
	}
}

// TestKillsProcessGroup checks that no process of a command survives its
// call, whether it times out, its context is canceled, or it exits leaving
// a background child; a child that ignores SIGTERM gets SIGKILL.
func TestKillsProcessGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	tests := []struct {
		name     string
		command  string
		timeout  int
		cancel   bool
		wantErr  bool
		want     []string
		maxSpent time.Duration
	}{
		{"timeout", "sleep 300 & echo $!; wait", 300, false, true,
			[]string{"Command timed out after 300ms", "(by SIGTERM)"}, 5 * time.Second},
		{"timeout, SIGTERM ignored", "trap '' TERM; sleep 300 & echo $!; wait", 300, false, true,
			[]string{"Command timed out", "by SIGTERM, then SIGKILL after 200ms"}, 5 * time.Second},
		{"canceled", "sleep 300 & echo $!; wait", 0, true, true,
			[]string{"Command canceled"}, 5 * time.Second},
		{"exit leaves a child", "sleep 300 & echo $!", 0, false, false,
			[]string{"Exit code: 0", "Processes the command left running were killed"}, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTool(t, Config{})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				timer := time.AfterFunc(300*time.Millisecond, cancel)
				defer timer.Stop()
			}
			input := cmd(tt.command)
			if tt.timeout > 0 {
				input = cmd(tt.command, "timeout", tt.timeout)
			}
			start := time.Now()
			res, err := call(ctx, tl, input)
			spent := time.Since(start)
			if tt.cancel != (err != nil) || (tt.cancel && !errors.Is(err, context.Canceled)) {
				t.Errorf("Run error = %v; want context.Canceled only when canceled", err)
			}
			if res.IsError != tt.wantErr {
				t.Errorf("IsError = %v; want %v; content:\n%s", res.IsError, tt.wantErr, res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content lacks %q; got:\n%s", w, res.Content)
				}
			}
			if spent > tt.maxSpent {
				t.Errorf("Run took %v; want under %v", spent, tt.maxSpent)
			}
			pid, err := strconv.Atoi(strings.SplitN(res.Content, "\n", 2)[0])
			if err != nil {
				t.Fatalf("no child pid in output %q", res.Content)
			}
			t.Cleanup(func() { killPid(pid) })
			if alive(pid) {
				t.Errorf("background child %d is still alive after Run returned", pid)
			}
		})
	}
}

// TestEscapedProcess checks that a process that left the process group
// while holding the output pipe does not make Run hang.
func TestEscapedProcess(t *testing.T) {
	tl := newTool(t, Config{})
	pidFile := filepath.Join(tl.cfg.Dir, "pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				killPid(pid)
			}
		}
	})
	start := time.Now()
	res := mustRun(t, tl, cmd(`command -v setsid >/dev/null || exit 42; setsid sh -c 'echo $$ > pid; exec sleep 30' & sleep 0.2; echo started`))
	if strings.Contains(res.Content, "Exit code: 42") {
		t.Skip("no setsid")
	}
	if spent := time.Since(start); spent > 5*time.Second || !strings.Contains(res.Content, "started") {
		t.Errorf("Run with an escaped pipe holder took %v and returned %q; want it back quickly with the output", spent, res.Content)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	tl := newTool(t, Config{})
	mustRun(t, tl, cmd("echo hi"))
	mustRun(t, tl, cmd("sleep 300 & echo $!"))
	mustRun(t, tl, cmd("sleep 300", "timeout", 100))
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("goroutines: %d before, %d after; want no leak", before, n)
	}
}

// alive reports whether pid is a live (not zombie) process, waiting up to
// a second for a killed one to go.
func alive(pid int) bool {
	for range 50 {
		state, _, ok := procStat(fmt.Sprintf("/proc/%d/stat", pid))
		if !ok || state == 'Z' || state == 'X' {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// killPid kills a test's leftover process, if any.
func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil && pid > 1 {
		p.Kill()
	}
}
