// Package claudecodetest installs the real Claude Code CLI for tests and
// runs it against a local fake Messages API (llm/llmtest), so troupe can be
// checked against the program it interoperates with (docs/protocol.md sections
// 14-16) without network access beyond the npm registry.
//
// The package lives under internal/ with a name ending in "test" because it
// is a test helper that starts processes; deps_test.go allows os/exec for
// exactly such packages.
package claudecodetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Version is the Claude Code release troupe is checked against; docs/protocol.md
// was read off this version.
const Version = "2.1.328"

// Package is the npm package that ships the CLI.
const Package = "@anthropic-ai/claude-code"

// BinEnv names an environment variable that, when set, is the path of a
// claude binary to use instead of the cached install. Install still checks
// that it reports Version.
const BinEnv = "TROUPE_CLAUDE_BIN"

// SkipEnv names an environment variable that, when set, is the reason the
// binary cannot be had: Install skips with it instead of trying npm again.
// .ci/run sets it when its own install failed.
const SkipEnv = "TROUPE_CLAUDE_SKIP"

// installTimeout bounds one npm install: the package brings a ~370 MB
// native binary.
const installTimeout = 10 * time.Minute

var (
	installOnce sync.Once
	installBin  string
	installSkip string // why tests that need the binary skip, when it is missing
)

// CacheDir returns the folder Claude Code is installed into:
// $XDG_CACHE_HOME/troupe-test/claude-code-<Version> (~/.cache/... when the
// variable is unset). .ci/run installs into the same folder.
func CacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("claudecodetest: no cache folder: %w", err)
	}
	return filepath.Join(base, "troupe-test", "claude-code-"+Version), nil
}

// BinPath returns where the installed binary lives inside dir, a folder
// that CacheDir returned.
func BinPath(dir string) string {
	return filepath.Join(dir, "node_modules", ".bin", "claude")
}

// findBin returns the first binary of Version in dir: the package's bin
// link, else the native binary of the platform package, which the
// wrapper's postinstall step links over its bin (an npm that skips install
// scripts leaves the bin a placeholder).
func findBin(ctx context.Context, dir string) (string, error) {
	bin := BinPath(dir)
	err := checkVersion(ctx, bin)
	if err == nil {
		return bin, nil
	}
	natives, _ := filepath.Glob(filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code-*", "claude"))
	for _, n := range natives {
		if checkVersion(ctx, n) == nil {
			return n, nil
		}
	}
	return "", err
}

// Install returns the path of a working claude binary of Version. It uses
// $TROUPE_CLAUDE_BIN when set, else the cached install, and installs the
// package with npm into the cache (never into the repository) when it is
// missing. When the binary cannot be had (npm missing, offline, a broken
// install) it skips the test with the exact reason. The install runs at
// most once per test process; concurrent test processes each install into
// a private folder and rename it into place, so they never see half an
// install.
func Install(t testing.TB) string {
	t.Helper()
	installOnce.Do(func() {
		installBin, installSkip = install(context.Background(), t.Logf)
	})
	if installSkip != "" {
		t.Skip(installSkip)
	}
	return installBin
}

// install finds or installs the binary; it returns the binary, or the
// reason a test must skip.
func install(ctx context.Context, logf func(string, ...any)) (bin, skip string) {
	if why := os.Getenv(SkipEnv); why != "" {
		return "", "claudecodetest: " + why + " ($" + SkipEnv + ")"
	}
	if p := os.Getenv(BinEnv); p != "" {
		if err := checkVersion(ctx, p); err != nil {
			return "", fmt.Sprintf("claudecodetest: $%s=%s: %v", BinEnv, p, err)
		}
		return p, ""
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err.Error()
	}
	if bin, err := findBin(ctx, dir); err == nil {
		return bin, ""
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Sprintf("claudecodetest: %s@%s is not installed in %s and npm is not on PATH to install it", Package, Version, dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Sprintf("claudecodetest: %v", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".claude-code-"+Version+".tmp-*")
	if err != nil {
		return "", fmt.Sprintf("claudecodetest: %v", err)
	}
	defer os.RemoveAll(tmp) // gone after a successful rename; cleanup otherwise
	logf("claudecodetest: installing %s@%s into %s (a large download)", Package, Version, dir)
	ictx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ictx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-save", Package+"@"+Version)
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Sprintf("claudecodetest: npm install %s@%s failed (offline?): %v\n%s", Package, Version, err, tail(out.String(), 2000))
	}
	if _, err := findBin(ctx, tmp); err != nil {
		return "", fmt.Sprintf("claudecodetest: npm installed %s@%s but its binary does not run: %v\nnpm said:\n%s", Package, Version, err, tail(out.String(), 2000))
	}
	// A broken earlier install is removed so the rename can land; another
	// test process may have landed a good one meanwhile, which is kept.
	if _, err := findBin(ctx, dir); err != nil {
		os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			return "", fmt.Sprintf("claudecodetest: move the install into %s: %v", dir, err)
		}
	}
	bin, err = findBin(ctx, dir)
	if err != nil {
		return "", fmt.Sprintf("claudecodetest: %s after install: %v", dir, err)
	}
	return bin, ""
}

// checkVersion runs bin --version and checks it reports Version.
func checkVersion(ctx context.Context, bin string) error {
	if _, err := os.Stat(bin); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	home, err := os.MkdirTemp("", "claudecodetest-version-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	cmd.Env = append(baseEnviron(), "HOME="+home, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"), "DISABLE_AUTOUPDATER=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %v: %s", bin, err, tail(string(out), 500))
	}
	got := strings.TrimSpace(string(out))
	if v, _, _ := strings.Cut(got, " "); v != Version {
		return fmt.Errorf("%s --version says %q, want %s", bin, got, Version)
	}
	return nil
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// errNoBinary is reported by Session methods on a zero Session.
var errNoBinary = errors.New("claudecodetest: session has no binary (use New)")
