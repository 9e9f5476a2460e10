package gitenv_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/internal/gitenv"
	"github.com/troupe-dev/troupe/internal/gittest"
)

func TestWithAppends(t *testing.T) {
	set := [][2]string{{"core.fsmonitor", "false"}}
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"none", []string{"A=1"}, []string{"A=1", "GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false", "GIT_CONFIG_COUNT=1"}},
		{"kept", []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=x"},
			[]string{"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=x", "GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1=false", "GIT_CONFIG_COUNT=2"}},
		{"stale entry beyond the count dropped", []string{"GIT_CONFIG_COUNT=0", "GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=evil"},
			[]string{"GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false", "GIT_CONFIG_COUNT=1"}},
		{"bad count", []string{"GIT_CONFIG_COUNT=x", "GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=evil"},
			[]string{"GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false", "GIT_CONFIG_COUNT=1"}},
	}
	for _, tt := range tests {
		if got := gitenv.With(tt.env, set); !slices.Equal(got, tt.want) {
			t.Errorf("%s: With(%q) = %q; want %q", tt.name, tt.env, got, tt.want)
		}
	}
}

func git(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir, c.Env = dir, env
	out, _ := c.CombinedOutput()
	return string(out)
}

// The folder runs its fsmonitor program through plain git; with Env's
// settings neither git -C folder nor --git-dir folder runs it.
func TestEnvStopsShippedFsmonitor(t *testing.T) {
	proj := t.TempDir()
	marker := gittest.EvilRepo(t, proj, "evil")
	base := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	git(t, proj, base, "-C", "evil", "status")
	if !gittest.Ran(marker) {
		t.Fatalf("the attack does not work with this git (no marker after plain git -C evil status), so this test proves nothing")
	}
	os.Remove(marker)
	env := gitenv.Env(base)
	for _, args := range [][]string{{"-C", "evil", "status"}, {"--git-dir=evil", "status"}, {"--git-dir=evil", "--work-tree=.", "status"}} {
		out := git(t, proj, env, args...)
		if gittest.Ran(marker) {
			t.Fatalf("git %s ran the shipped fsmonitor program with Env's settings:\n%s", strings.Join(args, " "), out)
		}
	}
	if out := git(t, proj, env, "-C", "evil", "status"); !strings.Contains(out, "safe.bareRepository") {
		t.Errorf("git -C evil status: want git to refuse the bare repository, got:\n%s", out)
	}
}

// Entries already in the environment still apply beside Env's.
func TestEnvKeepsCallersConfig(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Setenv(gitenv.HooksVar, "")
	env := gitenv.Env(append(os.Environ(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=troupe.test", "GIT_CONFIG_VALUE_0=kept"))
	dir := t.TempDir()
	if out := git(t, dir, env, "config", "troupe.test"); strings.TrimSpace(out) != "kept" {
		t.Errorf("git config troupe.test = %q; want kept", out)
	}
	if out := git(t, dir, env, "config", "core.hooksPath"); strings.TrimSpace(out) != "/dev/null" {
		t.Errorf("git config core.hooksPath = %q; want /dev/null", out)
	}
}
