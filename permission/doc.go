// Package permission decides whether an agent's tool call may run: allow,
// deny, or ask a person. It holds the permission modes, the rule syntax of
// Claude Code settings (Tool, Tool(specifier)) and Policy.Check, a pure
// function of the policy and the request: no I/O (but what the injected
// Policy.Realpath and Policy.Stat look up), no clock, no goroutines.
//
// Rules sit in three lists with precedence deny > ask > allow. Path
// specifiers (Read, Edit rules) are gitignore-style globs; Bash specifiers
// match the words of each simple command of a parsed shell script, never
// the raw string: a compound command is allowed only when every part is.
//
// A Bash command is allowed when every simple command in it is allowed on
// its own, by an allow rule or, in any mode but bypassPermissions, by the
// built-in read-only set (ls, cat, head, tail, wc, grep, rg, find without
// -exec or -delete, git status/diff/log/show/branch without writing
// options, ...) whose file arguments must lie inside the working
// directories. Command and process substitution, arithmetic, function
// definitions, indirection (eval, exec, source, sh -c, xargs, env CMD,
// sudo, ...), expanded words, PATH/LD_PRELOAD-like assignments and
// redirections outside the working directories make it ask, never allow.
// Deny rules also see through wrappers, program paths and sh -c / eval
// texts, and Read and Edit rules apply to the files a command visibly
// reads and writes.
//
// Shell parsing is injected (Policy.Shell, implemented by package
// permission/shell) so that this package keeps to the standard library;
// without a parser every Bash call asks.
//
// git -C DIR is read-only only when DIR is in the working directory's
// own repository (Policy.Stat tells): another repository's configuration
// can run programs.
//
// Paths are judged where they really point when Policy.Realpath is set:
// allow rules and the working-directory check see the real path (a link
// inside the working directory that leads outside is outside), deny and
// ask rules both the path as written and the real one. Without Realpath
// paths are compared lexically.
//
// Writes to protected paths always ask, in every mode but
// bypassPermissions and whatever allow rules say: anything below a .git,
// .troupe or .claude folder, .mcp.json, .gitconfig, .gitmodules,
// .gitattributes, shell start-up files (.bashrc, .bash_profile,
// .bash_login, .bash_logout, .profile, .zshrc, .zprofile, .zshenv,
// .zlogin, .zlogout) wherever they sit, .config/fish and .config/git, a
// git directory (a file named HEAD, anything in a folder holding one, a
// config beside objects/ and refs/), and Policy.Protected. This covers Write and Edit, redirections, and the
// file arguments of commands that visibly write (tee, cp, mv, sed -i,
// git config, ...), as written and through links.
//
// An allow rule for a command does not allow its redirections to files: a
// redirection is a write, allowed only inside the working directories in
// acceptEdits mode or under an Edit allow rule.
//
// All types are values; Policy.Check is safe for concurrent use.
package permission
