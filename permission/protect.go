package permission

import (
	"runtime"
	"strings"
)

// foldPaths says whether file names differ only in case on this system's
// usual file systems (macOS's APFS and HFS+, Windows' NTFS): there
// .CLAUDE/settings.json is .claude/settings.json, and a deny rule for .env
// covers .ENV. Allow rules are not folded, so folding never grants more.
var foldPaths = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// fold returns p in lower case where file names differ only in case.
func fold(p string) string {
	if foldPaths {
		return strings.ToLower(p)
	}
	return p
}

// protectedDirs are folder names whose contents configure or run code
// (git hooks and config, troupe's and Claude Code's settings): writes
// anywhere below them always ask.
var protectedDirs = []string{".git", ".troupe", ".claude"}

// protectedNames are file names that configure git or a shell, or that
// start programs (.mcp.json names MCP servers), wherever they sit: in the
// project or in a home.
var protectedNames = []string{
	".mcp.json", ".gitconfig", ".gitmodules", ".gitattributes",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout",
}

// protectedConfig are folders below a .config folder that hold shell or
// git configuration (fish's config.fish and conf.d, git's config and
// attributes).
var protectedConfig = []string{"fish", "git"}

// protected reports why writing the absolute, clean path p always asks,
// or "" when it does not. It is lexical: callers pass both the path as
// given and its real path.
func (p Policy) protected(abs string) string {
	if abs == "" {
		return ""
	}
	segs := splitPath(fold(abs))
	for i, s := range segs {
		if contains(protectedDirs, s) {
			return abs + " is below " + s
		}
		if s == ".config" && i+1 < len(segs) && contains(protectedConfig, segs[i+1]) {
			return abs + " is " + segs[i+1] + " configuration"
		}
	}
	if n := len(segs); n > 0 && contains(protectedNames, segs[n-1]) {
		return abs + " configures git, a shell or MCP servers"
	}
	if why := p.gitDirWrite(abs); why != "" {
		return why
	}
	for _, q := range p.Protected {
		q = strings.TrimSuffix(toSlash(q), "/")
		if q != "" && within(fold(abs), fold(q)) {
			return abs + " is a protected path (" + q + ")"
		}
	}
	return ""
}

// protectedWrite reports why writing abs (or where it really points)
// always asks, or "".
func (p Policy) protectedWrite(abs string) string {
	if why := p.protected(abs); why != "" {
		return why
	}
	if r := p.real(abs); r != abs {
		if why := p.protected(r); why != "" {
			return abs + " leads to " + why
		}
	}
	return ""
}
