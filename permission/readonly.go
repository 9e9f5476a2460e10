package permission

import (
	"path"
	"strings"
)

// indirect are commands that run other commands given to them as
// arguments or text; they always ask, whatever the rules say.
var indirect = map[string]bool{
	"eval": true, "exec": true, "source": true, ".": true, "command": true, "builtin": true,
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "fish": true, "csh": true, "tcsh": true, "busybox": true,
	"xargs": true, "env": true, "sudo": true, "doas": true, "su": true, "runuser": true, "nohup": true, "nice": true, "ionice": true,
	"timeout": true, "time": true, "watch": true, "stdbuf": true, "setsid": true, "chroot": true, "unbuffer": true, "parallel": true,
	"script": true, "strace": true, "ltrace": true, "flock": true, "trap": true, "alias": true, "fc": true, "coproc": true, "enable": true,
}

// shells take a command string with -c.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "fish": true, "csh": true, "tcsh": true}

// dangerousVar reports variables that change what a command runs or
// loads (PATH, LD_PRELOAD, BASH_ENV, GIT_*, ...).
func dangerousVar(name string) bool {
	switch name {
	case "PATH", "IFS", "ENV", "BASH_ENV", "PS4", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "CDPATH", "HOME",
		"PAGER", "EDITOR", "VISUAL", "MANPAGER", "LESSOPEN", "LESSCLOSE", "BROWSER",
		"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT", "PERLLIB",
		"RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "XDG_CONFIG_HOME", "ZDOTDIR", "TMPDIR", "SSH_ASKPASS", "GCONV_PATH":
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// readOnlyCmds are commands that only read, given the checks in
// readOnly; the value says whether their arguments are file paths to
// check against the working directories.
var readOnlyCmds = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
	"find": true, "file": true, "stat": true, "du": true, "tree": true, "diff": true, "cmp": true, "sort": true, "uniq": true,
	"nl": true, "cut": true, "od": true, "hexdump": true, "xxd": true, "md5sum": true, "sha1sum": true, "sha256sum": true,
	"jq": true, "column": true, "comm": true, "paste": true, "fold": true, "rev": true, "tac": true, "strings": true,
	"realpath": true, "readlink": true, "basename": true, "dirname": true,
	"pwd": false, "echo": false, "printf": false, "true": false, "false": false, "which": false, "whoami": false,
	"id": false, "uname": false, "printenv": false, "test": false, "[": false, "seq": false, "tr": false, "date": false,
	"df": true, "git": true,
}

// unsafeOption reports an argument of command name that makes it write
// files or run programs. It is checked on read-only commands and on the
// words a prefix rule lets through.
func unsafeOption(name, arg string) bool {
	switch name {
	case "find":
		switch arg {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return true
		}
	case "git":
		for _, p := range []string{"--output", "--exec", "--upload-pack", "--receive-pack", "--config-env", "--ext-diff", "--git-dir", "--work-tree", "--open-files-in-pager"} {
			if strings.HasPrefix(arg, p) {
				return true
			}
		}
	case "sort":
		return arg == "-o" || strings.HasPrefix(arg, "--output") || strings.HasPrefix(arg, "--compress-program") || strings.HasPrefix(arg, "-o")
	case "rg":
		return strings.HasPrefix(arg, "--pre")
	case "tree":
		return arg == "-o"
	case "date":
		return arg == "-s" || strings.HasPrefix(arg, "--set")
	}
	return false
}

// gitReadOnly are the git subcommands that only read, with extra checks
// in gitReadOnlyArgs.
var gitReadOnly = map[string]bool{
	"status": true, "diff": true, "log": true, "show": true, "branch": true, "rev-parse": true,
	"ls-files": true, "blame": true, "describe": true, "remote": true,
}

// readOnly reports whether the literal command words only read, and if
// not, why. Path arguments must lie inside the working directories.
func readOnly(words []string, env pathEnv) (bool, string) {
	if len(words) == 0 {
		return true, ""
	}
	name := words[0]
	checkPaths, ok := readOnlyCmds[name]
	if !ok {
		return false, "not a known read-only command"
	}
	args := words[1:]
	for _, a := range args {
		if unsafeOption(name, a) {
			return false, "option " + a + " may write or run programs"
		}
	}
	switch name {
	case "git":
		if ok, why := gitArgs(args); !ok {
			return false, why
		}
	case "uniq", "xxd":
		if positional(args) > 1 {
			return false, "a second operand is an output file"
		}
	case "date":
		for _, a := range args {
			if !strings.HasPrefix(a, "+") && !strings.HasPrefix(a, "-") {
				return false, "date with an operand sets the clock"
			}
		}
	}
	if checkPaths {
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				_, v, ok := strings.Cut(a, "=")
				if !ok {
					continue
				}
				a = v
			}
			if !pathLike(a) {
				continue
			}
			p, ok := resolve(a, env.cwd, env.home)
			if !ok || !(inside(p, env.cwd, env.dirs) || p == "/dev/null") {
				return false, "reads " + a + " outside the working directories"
			}
		}
	}
	return true, ""
}

func positional(args []string) int {
	n := 0
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "-" {
			n++
		}
	}
	return n
}

// pathLike reports an argument that may name a file outside the working
// directory: absolute, from a home, or climbing with "..".
func pathLike(a string) bool {
	if strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") {
		return true
	}
	for _, seg := range strings.Split(toSlash(a), "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// gitArgs checks git's global options and subcommand.
func gitArgs(args []string) (bool, string) {
	i := 0
	for i < len(args) && (args[i] == "--no-pager" || args[i] == "-P") {
		i++
	}
	if i == len(args) {
		return false, "git without a subcommand"
	}
	sub := args[i]
	if strings.HasPrefix(sub, "-") {
		return false, "git global option " + sub
	}
	if !gitReadOnly[sub] {
		return false, "git " + sub + " may write"
	}
	rest := args[i+1:]
	switch sub {
	case "branch":
		return gitBranch(rest)
	case "remote":
		for _, a := range rest {
			if a != "-v" && a != "--verbose" {
				return false, "git remote " + a + " may write"
			}
		}
	}
	return true, ""
}

// gitBranch allows listing branches only: a bare name would create one.
func gitBranch(args []string) (bool, string) {
	listFlags := map[string]bool{"-a": true, "--all": true, "-r": true, "--remotes": true, "-v": true, "-vv": true,
		"--verbose": true, "--show-current": true, "--color": true, "--no-color": true, "--column": true, "--no-column": true,
		"-i": true, "--ignore-case": true, "--omit-empty": true}
	takesValue := map[string]bool{"--merged": true, "--no-merged": true, "--contains": true, "--no-contains": true,
		"--points-at": true, "--sort": true, "--format": true}
	list := false
	for _, a := range args {
		if a == "--list" || a == "-l" {
			list = true
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, _ := strings.Cut(a, "=")
		switch {
		case a == "--list" || a == "-l" || listFlags[a]:
		case takesValue[name]:
			if name == a && i+1 < len(args) {
				i++
			}
		case strings.HasPrefix(a, "-"):
			return false, "git branch " + a + " may write"
		case !list:
			return false, "git branch " + a + " creates a branch"
		}
	}
	return true, ""
}

// pathEnv is what path checks need from a request.
type pathEnv struct {
	cwd, home string
	dirs      []string
}

// cleanBase returns the base name of a command path (/bin/rm -> rm).
func cleanBase(name string) string {
	if strings.Contains(name, "/") {
		return path.Base(name)
	}
	return name
}
