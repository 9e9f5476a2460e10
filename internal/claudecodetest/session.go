package claudecodetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Session is a private Claude Code installation state for one test: its
// own HOME and CLAUDE_CONFIG_DIR in temporary folders, pointed at a fake
// Messages API. Nothing of the user's ~/.claude is read or written.
type Session struct {
	Bin       string // the claude binary
	Home      string // HOME of the child
	ConfigDir string // CLAUDE_CONFIG_DIR of the child (Home/.claude)
	BaseURL   string // ANTHROPIC_BASE_URL
	APIKey    string // ANTHROPIC_API_KEY
	// Tmp is TMPDIR of the child: what claude (and a troupe it starts)
	// puts in the temporary folder goes with the test's folders.
	Tmp string
	// Env holds extra KEY=value entries, appended last so they win.
	Env []string
}

// New installs Claude Code (skipping the test when it cannot be had, see
// Install) and returns a Session with fresh HOME and config folders aimed
// at baseURL with a dummy API key. The global config is seeded so that an
// interactive run skips onboarding, trusts the test's folders and accepts
// the key (see SeedConfig).
func New(t testing.TB, baseURL string) *Session {
	t.Helper()
	bin := Install(t)
	home := t.TempDir()
	s := &Session{
		Bin:       bin,
		Home:      home,
		ConfigDir: filepath.Join(home, ".claude"),
		BaseURL:   baseURL,
		APIKey:    "sk-ant-claudecodetest-0000000000000000",
		Tmp:       t.TempDir(),
	}
	if err := os.MkdirAll(s.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.SeedConfig(); err != nil {
		t.Fatal(err)
	}
	return s
}

// ambientPrefixes are the variables of the test's own environment that
// must not reach the child: a developer's real credentials, endpoints,
// config folders and the markers of a surrounding Claude Code session.
var ambientPrefixes = []string{"ANTHROPIC_", "CLAUDE", "AWS_BEARER_TOKEN_BEDROCK=", "HOME=", "XDG_CONFIG_HOME=", "TMUX=", "TMUX_PANE="}

// baseEnviron returns the test process's environment without the ambient
// variables above.
func baseEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		drop := false
		for _, p := range ambientPrefixes {
			if strings.HasPrefix(kv, p) {
				drop = true
				break
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return env
}

// Environ returns the full environment for the child: the test process's
// environment without ambient Claude/Anthropic variables, then HOME,
// CLAUDE_CONFIG_DIR, the fake server's URL and key, telemetry, error
// reporting, auto-update and non-essential traffic off, agent teams on,
// TMPDIR, then s.Env.
func (s *Session) Environ() []string {
	env := append(baseEnviron(),
		"HOME="+s.Home,
		"CLAUDE_CONFIG_DIR="+s.ConfigDir,
		"ANTHROPIC_BASE_URL="+s.BaseURL,
		"ANTHROPIC_API_KEY="+s.APIKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1",
		"TMPDIR="+s.Tmp,
	)
	return append(env, s.Env...)
}

// Command returns claude args... to run in dir with s's environment. It is
// killed when ctx ends.
func (s *Session) Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.Bin, args...)
	cmd.Dir = dir
	cmd.Env = s.Environ()
	return cmd
}

// Result is the outcome of a finished run.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// Print runs `claude -p prompt args...` in dir with no standard input and
// returns its output once it exits. A non-zero exit is not an error (see
// Result.ExitCode); failing to start, or ctx ending first, is.
func (s *Session) Print(ctx context.Context, dir, prompt string, args ...string) (Result, error) {
	if s == nil || s.Bin == "" {
		return Result{}, errNoBinary
	}
	if prompt == "" {
		return Result{}, errors.New("claudecodetest: Print needs a prompt")
	}
	cmd := s.Command(ctx, dir, append([]string{"-p", prompt}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if cmd.ProcessState != nil {
		r.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return r, fmt.Errorf("claudecodetest: claude -p %q: %w (stderr: %s)", prompt, ctx.Err(), tail(r.Stderr, 1000))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return r, fmt.Errorf("claudecodetest: claude -p %q: %w", prompt, err)
	}
	return r, nil
}

// SeedConfig writes the global config file ($CLAUDE_CONFIG_DIR/.claude.json)
// as a user who finished onboarding and approved s.APIKey would have it,
// so that an interactive run goes straight to its prompt. Folders to trust
// are added with Trust. Keys already in the file are kept.
func (s *Session) SeedConfig() error {
	return s.updateConfig(func(c map[string]any) {
		c["hasCompletedOnboarding"] = true
		c["lastOnboardingVersion"] = Version
		c["bypassPermissionsModeAccepted"] = true
		key := s.APIKey
		if len(key) > 20 {
			key = key[len(key)-20:]
		}
		c["customApiKeyResponses"] = map[string]any{"approved": []string{key}, "rejected": []string{}}
	})
}

// Trust marks dir as a trusted project folder in the global config, so an
// interactive run in it shows no trust dialog.
func (s *Session) Trust(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	return s.updateConfig(func(c map[string]any) {
		projects, _ := c["projects"].(map[string]any)
		if projects == nil {
			projects = map[string]any{}
		}
		p, _ := projects[abs].(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		p["hasTrustDialogAccepted"] = true
		p["hasCompletedProjectOnboarding"] = true
		projects[abs] = p
		c["projects"] = projects
	})
}

// ConfigFile is the path of the global config file of s.
func (s *Session) ConfigFile() string { return filepath.Join(s.ConfigDir, ".claude.json") }

func (s *Session) updateConfig(edit func(map[string]any)) error {
	path := s.ConfigFile()
	c := map[string]any{}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &c); err != nil {
			return fmt.Errorf("claudecodetest: %s: %w", path, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	edit(c)
	out, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o600)
}
