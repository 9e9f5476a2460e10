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
// loads (PATH, LD_PRELOAD, BASH_ENV, GIT_*, PAGER, npm_config_*, ...),
// whatever the command.
func dangerousVar(name string) bool {
	switch name {
	case "PATH", "IFS", "ENV", "BASH_ENV", "PS0", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND",
		"CDPATH", "HOME", "SHELL", "HISTFILE", "INPUTRC", "GLOBIGNORE", "TMOUT", "MAIL", "MAILPATH",
		"PAGER", "EDITOR", "VISUAL", "MANPAGER", "MANOPT", "LESS", "LESSOPEN", "LESSCLOSE", "LESSKEY", "BROWSER",
		"EXINIT", "VIMINIT", "MYVIMRC",
		"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT", "PERLLIB",
		"RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MAVEN_OPTS", "GRADLE_OPTS",
		"XDG_CONFIG_HOME", "XDG_DATA_HOME", "ZDOTDIR", "TMPDIR", "SSH_ASKPASS", "SUDO_ASKPASS", "GCONV_PATH",
		"LOCPATH", "NLSPATH", "HOSTALIASES", "RIPGREP_CONFIG_PATH", "GREP_OPTIONS", "TAR_OPTIONS", "JQ_LIBRARY_PATH",
		"GOFLAGS", "GOTOOLCHAIN", "GOENV", "GOROOT", "GOPATH", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOSUMCHECK",
		"GOINSECURE", "GOPRIVATE", "GONOPROXY", "GOMODCACHE", "GOEXPERIMENT", "CC", "CXX", "LD", "AR", "CPP",
		"CFLAGS", "CXXFLAGS", "LDFLAGS", "CPPFLAGS", "MAKE", "MAKEFLAGS", "MFLAGS", "RUSTC", "RUSTC_WRAPPER",
		"RUSTFLAGS", "RUSTDOCFLAGS":
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_", "BASH_XTRACE", "BASH_LOADABLES", "CARGO_",
		"CGO_", "YARN_", "PNPM_", "BUN_", "DENO_", "PIP_", "UV_", "POETRY_", "NPM_CONFIG_"} {
		if strings.HasPrefix(strings.ToUpper(name), p) {
			return true
		}
	}
	return false
}

// quietVar reports an assignment that a read-only command may carry: a
// locale, time zone or display setting whose value names no file.
func quietVar(a Assign) bool {
	v := a.Value.Value
	if !a.Value.Literal || strings.HasPrefix(v, "/") || strings.HasPrefix(v, ":") || strings.Contains(v, "..") {
		return false
	}
	switch a.Name {
	case "TZ":
		return true
	case "LANG", "LANGUAGE", "COLUMNS", "LINES", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "TERM",
		"POSIXLY_CORRECT", "GREP_COLOR", "GREP_COLORS", "LS_COLORS", "TIME_STYLE", "QUOTING_STYLE", "BLOCK_SIZE",
		"DU_BLOCK_SIZE", "DF_BLOCK_SIZE", "LS_BLOCK_SIZE", "JQ_COLORS", "CI":
		return !strings.Contains(v, "/")
	}
	return strings.HasPrefix(a.Name, "LC_") && !strings.Contains(v, "/")
}

func quietVars(as []Assign) bool {
	for _, a := range as {
		if !quietVar(a) {
			return false
		}
	}
	return true
}

// unsafeOption reports an argument of command name that makes it write
// files, run programs or read files that cannot be checked. It is
// checked on the words a prefix rule lets through (Bash(git diff:*) does
// not cover git diff --output=x).
func unsafeOption(name, arg string) bool {
	if !strings.HasPrefix(arg, "-") || arg == "-" || arg == "--" {
		return false
	}
	var o options
	switch name {
	case "git":
		for _, p := range []string{"--output", "--exec", "--upload-pack", "--receive-pack", "--config-env", "--ext-diff",
			"--textconv", "--git-dir", "--work-tree", "--open-files-in-pager", "--show-signature", "--bare", "--exec-path="} {
			if strings.HasPrefix(arg, p) {
				return true
			}
		}
		return false
	case "find":
		o = findOpts
	default:
		c, ok := commands[name]
		if !ok {
			return false
		}
		o = c.opts
	}
	if k, ok := o[arg]; ok {
		return k == optBad
	}
	if strings.HasPrefix(arg, "--") {
		long, _, _ := strings.Cut(arg, "=")
		if k, ok := o[long]; ok {
			return k == optBad
		}
		for n, k := range o {
			if k == optBad && strings.HasPrefix(n, long) {
				return true // GNU tools take abbreviations: --out is --output
			}
		}
		return false
	}
	for j := 1; j < len(arg); j++ {
		switch o["-"+arg[j:j+1]] {
		case optBad:
			return true
		case optValue, optFile, optOptional, optPair, optPairFile:
			return false // the rest is its value
		}
	}
	return false
}

// readOnly reports whether the literal command words only read, and if
// not, why. Every option must be known (see commands), and every file it
// reads must lie inside the working directories.
func readOnly(words []string, env pathEnv) (bool, string) {
	if len(words) == 0 {
		return true, ""
	}
	name, args := words[0], words[1:]
	var (
		files []string
		why   string
	)
	switch name {
	case "git":
		return gitReadOnly(args, env)
	case "find":
		files, why = findArgs(args)
	default:
		c, ok := commands[name]
		if !ok {
			return false, "not a known read-only command"
		}
		files, _, why = c.read(name, args)
	}
	if why != "" {
		return false, why
	}
	for _, a := range files {
		if a == "-" {
			continue
		}
		p, ok := resolve(a, env.cwd, env.home)
		if !ok || !(inside(p, env.cwd, env.dirs) || p == "/dev/null") {
			return false, "reads " + a + " outside the working directories"
		}
	}
	return true, ""
}

// read returns the files that command name with args reads, the folders
// whose files it reads without naming them (grep -r x src reads below
// src), and why it is not read-only ("" when it is).
func (c command) read(name string, args []string) (files, scans []string, why string) {
	switch c.args {
	case argRaw:
		if name == "printf" && len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "--" {
			return nil, nil, "printf " + args[0] + " may set a variable"
		}
		if name == "test" || name == "[" {
			for _, a := range args {
				if a == "-v" || a == "-R" {
					// bash evaluates the array index of the variable
					// named, so 'a[$(cmd)]' runs cmd.
					return nil, nil, name + " " + a + " evaluates the index of the variable it names"
				}
			}
		}
		return nil, nil, ""
	}
	p := parseArgs(c.opts, args, c.nums)
	if p.bad != "" {
		why = "option " + p.bad + " " + p.why
	}
	ops := p.operands
	switch c.args {
	case argText:
		if name == "date" {
			for _, a := range ops {
				if !strings.HasPrefix(a, "+") && why == "" {
					why = "date with an operand sets the clock"
				}
			}
		}
		return p.files, nil, why
	case argPattern:
		given := p.has("-e", "-f", "--regexp", "--file", "--files", "--type-list", "--from-file")
		if name == "jq" {
			given = p.has("-f", "--from-file")
		}
		if !given && len(ops) > 0 {
			if name == "jq" && (strings.Contains(ops[0], "import") || strings.Contains(ops[0], "include")) && why == "" {
				why = "the jq program may load modules or data files"
			}
			ops = ops[1:]
		}
	}
	if c.maxFiles > 0 && len(ops) > c.maxFiles && why == "" {
		why = "operand " + ops[c.maxFiles] + " is an output file"
	}
	if name == "strings" {
		for _, a := range ops {
			if strings.HasPrefix(a, "@") && why == "" {
				why = "strings " + a + " reads options from a file"
			}
		}
	}
	files = append(ops, p.files...)
	recursive := c.scanAlways || p.has(c.scan...) ||
		strings.HasPrefix(p.seen["-d"], "rec") && name != "rg" || strings.HasPrefix(p.seen["--directories"], "rec")
	if recursive {
		scans = files
		if len(ops) == 0 && name != "diff" {
			scans = append([]string{"."}, scans...)
		}
	}
	return files, scans, why
}

// findOpts are the primaries of find's expression.
var findOpts = opts(`-name= -iname= -path= -ipath= -wholename= -iwholename= -regex= -iregex= -regextype= -type=
	-xtype= -size= -perm= -user= -group= -uid= -gid= -mtime= -mmin= -atime= -amin= -ctime= -cmin= -newer@ -anewer@
	-cnewer@ -samefile@ -inum= -links= -maxdepth= -mindepth= -used= -lname= -ilname= -fstype= -context= -printf=
	-print -print0 -ls -prune -quit -true -false -empty -readable -writable -executable -nouser -nogroup -depth -d
	-xdev -mount -follow -noleaf -daystart -ignore_readdir_race -noignore_readdir_race -not -a -and -o -or -help
	-version -warn -nowarn -exec! -execdir! -ok! -okdir! -delete! -fprint! -fprint0! -fprintf! -fls! -files0-from!`)

// findArgs returns the start points and the files that find with args
// names, and why it is not read-only ("" when it is).
func findArgs(args []string) (files []string, why string) {
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O"):
		case a == "-D" && i+1 < len(args):
			i++
		default:
			goto points
		}
		i++
	}
points:
	for ; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == ")" || a == "," {
			break
		}
		files = append(files, a)
	}
	for ; i < len(args); i++ {
		a := args[i]
		switch a {
		case "(", ")", "!", ",":
			continue
		}
		kind, ok := findOpts[a]
		if !ok && strings.HasPrefix(a, "-newer") && len(a) == 8 {
			kind, ok = optFile, true
			if a[7] == 't' {
				kind = optValue
			}
		}
		switch {
		case !ok:
			if why == "" {
				why = "find " + a + " is not a known primary"
			}
		case kind == optBad:
			if why == "" {
				why = "find " + a + " may write files or run programs"
			}
		case kind == optValue || kind == optFile:
			if i+1 >= len(args) {
				why = "find " + a + " lacks its value"
				break
			}
			i++
			if kind == optFile {
				files = append(files, args[i])
			}
		}
	}
	return files, why
}

// pathEnv is what path checks need from a request.
type pathEnv struct {
	cwd, home string
	dirs      []string
	// sameRepo reports whether git run in an absolute folder works in
	// the working directory's repository (Policy.sameRepo); nil knows
	// only the working directory itself.
	sameRepo func(dir string) bool
}

// inRepo reports whether git run in the absolute folder dir works in the
// working directory's repository.
func (e pathEnv) inRepo(dir string) bool {
	if e.sameRepo == nil {
		return path.Clean(dir) == path.Clean(toSlash(e.cwd))
	}
	return e.sameRepo(dir)
}

// cleanBase returns the base name of a command path (/bin/rm -> rm).
func cleanBase(name string) string {
	if strings.Contains(name, "/") {
		return path.Base(name)
	}
	return name
}
