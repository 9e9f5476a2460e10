// Package gitenv gives every git that troupe or its agents run a
// configuration that no repository can change: git's fsmonitor and hooks
// are off, and a bare repository is used only when named explicitly
// (--git-dir, GIT_DIR), never found by looking around.
//
// A folder holding HEAD, config, objects/ and refs/ is a git repository to
// git: with core.worktree=.. and core.fsmonitor=CMD in its config, a plain
// "git -C folder status" runs CMD. A cloned project can ship such a
// folder. The settings are given through the environment
// (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n, read by git
// 2.31 and later at the command line's precedence, above every
// configuration file), so they hold for git run by a script or a build
// tool too, and the command the model wrote is run as written.
package gitenv

import (
	"os"
	"strconv"
	"strings"
)

// HooksVar is the variable of troupe's own environment that keeps git's
// hooks on (value 1) for the commands agents run: hooks a person
// installed (pre-commit checks, Git LFS) then run, and so would hooks a
// repository's configuration names.
const HooksVar = "TROUPE_GIT_HOOKS"

// Settings are the configuration entries Env adds, as key, value pairs.
func Settings(hooks bool) [][2]string {
	s := [][2]string{{"core.fsmonitor", "false"}, {"safe.bareRepository", "explicit"}}
	if !hooks {
		s = append(s, [2]string{"core.hooksPath", "/dev/null"})
	}
	return s
}

// Env returns env (KEY=value strings; nil means this process's
// environment) with the settings added after any GIT_CONFIG_COUNT entries
// already there, which are kept: a later entry wins, so these do. Hooks
// stay off unless HooksVar is 1 in this process's environment.
func Env(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return With(env, Settings(os.Getenv(HooksVar) == "1"))
}

// With returns env with the configuration entries set appended to its
// GIT_CONFIG_COUNT entries. A malformed or missing count is taken as 0,
// as git does not: git refuses to run with a bad count, so entries under
// a bad count were never in force.
func With(env []string, set [][2]string) []string {
	n := 0
	out := make([]string, 0, len(env)+2*len(set)+1)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "GIT_CONFIG_COUNT" {
			if c, err := strconv.Atoi(v); err == nil && c > 0 {
				n = c
			}
			continue
		}
		out = append(out, kv)
	}
	// Drop entries at the indexes about to be used, left over from a
	// count smaller than their index: git would not read them, and they
	// must not shadow ours.
	keep := out[:0]
	for _, kv := range out {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := index(k); ok && i >= n {
			continue
		}
		keep = append(keep, kv)
	}
	out = keep
	for i, s := range set {
		j := strconv.Itoa(n + i)
		out = append(out, "GIT_CONFIG_KEY_"+j+"="+s[0], "GIT_CONFIG_VALUE_"+j+"="+s[1])
	}
	return append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(n+len(set)))
}

// index returns n of GIT_CONFIG_KEY_n or GIT_CONFIG_VALUE_n.
func index(k string) (int, bool) {
	for _, p := range []string{"GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"} {
		if s, ok := strings.CutPrefix(k, p); ok {
			i, err := strconv.Atoi(s)
			return i, err == nil && i >= 0
		}
	}
	return 0, false
}

// Args returns the same settings as git -c options, for a git troupe runs
// itself with its own argument list.
func Args() []string {
	var out []string
	for _, s := range Settings(false) {
		out = append(out, "-c", s[0]+"="+s[1])
	}
	return out
}
