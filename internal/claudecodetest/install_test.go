package claudecodetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeClaude writes an executable script that prints version and returns
// its path.
func fakeClaude(t *testing.T, version string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\n[ \"$1\" = --version ] && echo '" + version + " (Claude Code)'\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInstallUsesBinEnv(t *testing.T) {
	t.Setenv(SkipEnv, "")
	good := fakeClaude(t, Version)
	t.Setenv(BinEnv, good)
	bin, skip := install(t.Context(), t.Logf)
	if bin != good || skip != "" {
		t.Errorf("install() = %q, %q; want %q and no skip", bin, skip, good)
	}

	t.Setenv(BinEnv, fakeClaude(t, "2.0.1"))
	bin, skip = install(t.Context(), t.Logf)
	if bin != "" || !strings.Contains(skip, `says "2.0.1 (Claude Code)", want `+Version) {
		t.Errorf("install() with a wrong version = %q, %q; want a skip naming both versions", bin, skip)
	}

	t.Setenv(BinEnv, filepath.Join(t.TempDir(), "missing"))
	if _, skip = install(t.Context(), t.Logf); !strings.Contains(skip, "no such file") {
		t.Errorf("install() with a missing binary: skip %q; want it to say the file is missing", skip)
	}
}

func TestInstallSkipsWithCIReason(t *testing.T) {
	t.Setenv(SkipEnv, "npm install failed in .ci/run: ENOTFOUND")
	t.Setenv(BinEnv, fakeClaude(t, Version)) // not even a good binary is used
	bin, skip := install(t.Context(), t.Logf)
	if bin != "" || !strings.Contains(skip, "npm install failed in .ci/run: ENOTFOUND") {
		t.Errorf("install() = %q, %q; want the CI's reason", bin, skip)
	}
}

func TestInstallWithoutNPMSkipsWithReason(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(SkipEnv, "")
	t.Setenv(BinEnv, "")
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("PATH", t.TempDir()) // no npm there
	bin, skip := install(context.Background(), t.Logf)
	if bin != "" || !strings.Contains(skip, "npm is not on PATH") || !strings.Contains(skip, Package+"@"+Version) {
		t.Errorf("install() = %q, %q; want a skip that names the package and the missing npm", bin, skip)
	}
	dir, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "troupe-test", "claude-code-"+Version); dir != want {
		t.Errorf("CacheDir() = %q; want %q", dir, want)
	}
}

func TestInstallUsesCachedBinary(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(SkipEnv, "")
	t.Setenv(BinEnv, "")
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("PATH", t.TempDir()) // an install attempt would fail: no npm
	dir, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := BinPath(dir)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fakeClaude(t, Version), bin); err != nil {
		t.Fatal(err)
	}
	got, skip := install(t.Context(), t.Logf)
	if got != bin || skip != "" {
		t.Errorf("install() = %q, %q; want the cached %q", got, skip, bin)
	}
}

func TestEnvironDropsAmbientVariables(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "real-key")
	t.Setenv("ANTHROPIC_BASE_URL", "https://example.invalid")
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("CLAUDE_CONFIG_DIR", "/root/.claude")
	t.Setenv("TMUX", "/tmp/tmux-0/default,1,0")
	s := &Session{Bin: "claude", Home: "/h", ConfigDir: "/h/.claude", BaseURL: "http://127.0.0.1:1", APIKey: "k", Env: []string{"EXTRA=1"}}
	env := s.Environ()
	get := func(k string) []string {
		var vals []string
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				vals = append(vals, v)
			}
		}
		return vals
	}
	for k, want := range map[string]string{
		"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "HOME": "/h",
		"CLAUDE_CONFIG_DIR": "/h/.claude", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1", "DISABLE_TELEMETRY": "1", "EXTRA": "1",
	} {
		if got := get(k); !slices.Equal(got, []string{want}) {
			t.Errorf("%s = %q; want exactly %q", k, got, want)
		}
	}
	for _, k := range []string{"CLAUDECODE", "TMUX"} {
		if got := get(k); len(got) != 0 {
			t.Errorf("%s = %q leaked from the test's environment", k, got)
		}
	}
}

func TestSeedConfigAndTrustKeepUnknownKeys(t *testing.T) {
	home := t.TempDir()
	s := &Session{Home: home, ConfigDir: home, APIKey: "sk-ant-0123456789abcdefghijKLMNOPQRST"}
	if err := os.WriteFile(s.ConfigFile(), []byte(`{"theme":"dark","projects":{"/other":{"x":1}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.SeedConfig(); err != nil {
		t.Fatal(err)
	}
	if err := s.Trust("/work/dir"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(s.ConfigFile())
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Theme                  string
		HasCompletedOnboarding bool
		CustomAPIKeyResponses  struct{ Approved []string } `json:"customApiKeyResponses"`
		Projects               map[string]map[string]any
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Theme != "dark" || !c.HasCompletedOnboarding || !slices.Equal(c.CustomAPIKeyResponses.Approved, []string{"abcdefghijKLMNOPQRST"}) ||
		c.Projects["/other"]["x"] != 1.0 || c.Projects["/work/dir"]["hasTrustDialogAccepted"] != true {
		t.Errorf("config after SeedConfig and Trust:\n%s", b)
	}

	if err := os.WriteFile(s.ConfigFile(), []byte(`{`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.SeedConfig(); err == nil || !strings.Contains(err.Error(), s.ConfigFile()) {
		t.Errorf("SeedConfig on a corrupt file = %v; want an error naming it", err)
	}
}

func TestPrintRejectsBadUse(t *testing.T) {
	if _, err := (&Session{}).Print(t.Context(), t.TempDir(), "hi"); err != errNoBinary {
		t.Errorf("Print on a zero Session = %v; want errNoBinary", err)
	}
	s := &Session{Bin: fakeClaude(t, Version)}
	if _, err := s.Print(t.Context(), t.TempDir(), ""); err == nil {
		t.Error("Print with an empty prompt succeeded")
	}
}

func TestFindBinFallsBackToTheNativeBinary(t *testing.T) {
	dir := t.TempDir()
	placeholder := BinPath(dir)
	native := filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
	for _, p := range []string{placeholder, native} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// An npm that skipped the postinstall step leaves a bin that does not run.
	if err := os.WriteFile(placeholder, []byte("#!/bin/sh\necho 'claude native binary not installed' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := findBin(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("findBin with only a placeholder = %v; want its failure", err)
	}
	if err := os.Symlink(fakeClaude(t, Version), native); err != nil {
		t.Fatal(err)
	}
	if got, err := findBin(t.Context(), dir); err != nil || got != native {
		t.Errorf("findBin = %q, %v; want the platform package's binary %q", got, err, native)
	}
}

// TestInstallFromNPM runs the real npm install into a fresh cache. It
// downloads ~370 MB, so it runs only with TROUPE_TEST_NPM_INSTALL=1 (CI
// installs through .ci/run instead, into the shared cache).
func TestInstallFromNPM(t *testing.T) {
	if os.Getenv("TROUPE_TEST_NPM_INSTALL") != "1" {
		t.Skip("set TROUPE_TEST_NPM_INSTALL=1 to download and install the package into a temporary cache")
	}
	t.Setenv(SkipEnv, "")
	t.Setenv(BinEnv, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	bin, skip := install(t.Context(), t.Logf)
	if skip != "" {
		t.Fatal(skip)
	}
	if err := checkVersion(t.Context(), bin); err != nil {
		t.Fatal(err)
	}
	dir, _ := CacheDir()
	if !strings.HasPrefix(bin, dir) {
		t.Errorf("binary %s outside the cache %s", bin, dir)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".claude-code-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary install folders left behind: %q", leftovers)
	}
}
