package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/troupe-dev/troupe/cli/trustcmd"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/tui"
)

// trustGate runs before a lead (troupe -p, the interactive lead) reads
// anything of cwd: a trusted folder passes; --trust trusts it; otherwise
// the interactive lead asks the person and -p refuses, saying how to
// trust it. A trusted folder whose hooks or MCP servers changed since is
// asked about (refused) again, naming the change.
func (a *app) trustGate(ctx context.Context, h *headless, cwd string, interactive bool) error {
	store, err := trustcmd.Store(a.App)
	if err != nil {
		return err
	}
	runs, lines := trustcmd.Review(cwd)
	st, err := store.Check(cwd, runs)
	if err != nil {
		return err
	}
	if st.Trusted && !st.Changed() {
		return nil
	}
	record := func(how string) error {
		if err := store.Trust(ctx, cwd, runs); err != nil {
			return err
		}
		fmt.Fprintf(a.Stderr, "troupe: trusted %s (%s); revoke with: troupe trust --revoke %s\n", st.Dir, how, shellQuote(st.Dir))
		return nil
	}
	if h.trust {
		return record("--trust")
	}
	var change []string
	for _, l := range st.Added {
		change = append(change, "+ "+termtext.Line(l)) // the repository's text: escapes shown, never obeyed
	}
	for _, l := range st.Removed {
		change = append(change, "- "+termtext.Line(l))
	}
	if interactive {
		q := tui.TrustQuestion{Dir: st.Dir, Changed: st.Changed(), Lines: lines, Input: a.Stdin, Output: a.Stdout}
		if st.Changed() {
			q.Lines = change
		}
		yes, err := tui.AskTrust(ctx, q)
		if err != nil {
			return err
		}
		if !yes {
			return fmt.Errorf("%s is not trusted; nothing of it was run (trust it with: troupe trust %s)", st.Dir, shellQuote(st.Dir))
		}
		return record("answered in the trust question")
	}
	var b strings.Builder
	if st.Changed() {
		fmt.Fprintf(&b, "%s changed since it was trusted; its files now run:\n", st.Dir)
		for _, l := range change {
			b.WriteString("  " + l + "\n")
		}
		fmt.Fprintf(&b, "Nothing was run. Approve the change with: troupe trust %s (or run again with --trust)", shellQuote(st.Dir))
		return errors.New(b.String())
	}
	fmt.Fprintf(&b, "%s is not trusted: its own settings, .mcp.json and agent definitions are not read until you trust it", st.Dir)
	if len(lines) > 0 {
		b.WriteString("; they would:\n")
		for _, l := range lines {
			b.WriteString("  " + termtext.Line(l) + "\n")
		}
	} else {
		b.WriteString(".\n")
	}
	fmt.Fprintf(&b, "Nothing was run. Trust it with: troupe trust %s; or run with --trust; or list it under %q in %s", shellQuote(st.Dir), settings.TrustKey, store.UserSettings)
	return errors.New(b.String())
}

// shellQuote quotes a path for a command line when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}();&|<>~#") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// warnUntrusted says on w when cwd is not trusted: a worker or a pane
// teammate, which no trust question precedes, then runs without the
// folder's hooks, MCP servers and wider permissions (the loaders leave
// them out).
func (a *app) warnUntrusted(cwd string, w io.Writer) {
	store, err := trustcmd.Store(a.App)
	if err != nil {
		return
	}
	if st, err := store.Check(cwd, nil); err != nil {
		fmt.Fprintf(w, "troupe: warning: %v\n", err)
	} else if !st.Trusted {
		fmt.Fprintf(w, "troupe: warning: %s is not trusted: its hooks, MCP servers, agent modes and wider permissions are left out (trust it with: troupe trust %s)\n", st.Dir, shellQuote(st.Dir))
	}
}
