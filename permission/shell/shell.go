// Package shell parses Bash command lines into permission.Script with
// mvdan.cc/sh/v3/syntax, for permission.Policy.Shell. It never splits
// strings: every simple command of pipelines, lists, subshells, blocks,
// loops, conditionals, function bodies and substitutions is found in the
// syntax tree.
//
// Parse is a pure function, safe for concurrent use.
package shell

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/troupe-dev/troupe/permission"
)

// Risks that Parse reports.
const (
	RiskCmdSubst   = "command substitution"
	RiskProcSubst  = "process substitution"
	RiskArithmetic = "arithmetic evaluation"
	RiskTest       = "[[ ]] expression"
	RiskCoprocess  = "coprocess"
	RiskFunction   = "function definition"
)

// Parse parses a Bash command line. A syntax error is returned with its
// line:column.
func Parse(src string) (permission.Script, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return permission.Script{}, err
	}
	w := walker{src: src, risks: map[string]bool{}}
	syntax.Walk(f, w.visit)
	s := permission.Script{Commands: w.cmds, Functions: w.funcs}
	for _, r := range []string{RiskCmdSubst, RiskProcSubst, RiskArithmetic, RiskTest, RiskCoprocess, RiskFunction} {
		if w.risks[r] {
			s.Risks = append(s.Risks, r)
		}
	}
	return s, nil
}

type walker struct {
	src   string
	cmds  []permission.Command
	funcs []string
	risks map[string]bool
}

func (w *walker) visit(n syntax.Node) bool {
	switch x := n.(type) {
	case *syntax.Stmt:
		var redirs []permission.Redirect
		for _, r := range x.Redirs {
			redirs = append(redirs, w.redirect(r))
		}
		if x.Coprocess {
			w.risks[RiskCoprocess] = true
		}
		switch c := x.Cmd.(type) {
		case *syntax.CallExpr:
			w.cmds = append(w.cmds, w.call(c, redirs))
		case *syntax.DeclClause:
			w.cmds = append(w.cmds, w.decl(c, redirs))
		default:
			if len(redirs) > 0 || x.Cmd == nil {
				w.cmds = append(w.cmds, permission.Command{Redirects: redirs})
			}
		}
	case *syntax.CmdSubst:
		w.risks[RiskCmdSubst] = true
	case *syntax.ProcSubst:
		w.risks[RiskProcSubst] = true
	case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
		w.risks[RiskArithmetic] = true
	case *syntax.TestClause:
		w.risks[RiskTest] = true
	case *syntax.CoprocClause:
		w.risks[RiskCoprocess] = true
	case *syntax.FuncDecl:
		// The body's commands are collected like any others; calls to
		// the function ask.
		w.risks[RiskFunction] = true
		if x.Name != nil {
			w.funcs = append(w.funcs, x.Name.Value)
		}
		for _, n := range x.Names {
			w.funcs = append(w.funcs, n.Value)
		}
	}
	return true
}

func (w *walker) call(c *syntax.CallExpr, redirs []permission.Redirect) permission.Command {
	cmd := permission.Command{Redirects: redirs}
	for _, a := range c.Assigns {
		cmd.Assigns = append(cmd.Assigns, w.assign(a))
	}
	for _, a := range c.Args {
		cmd.Args = append(cmd.Args, w.word(a))
	}
	return cmd
}

// decl turns export/declare/local/readonly/typeset into a command named
// after the builtin whose assignments are its named arguments.
func (w *walker) decl(d *syntax.DeclClause, redirs []permission.Redirect) permission.Command {
	cmd := permission.Command{Redirects: redirs}
	cmd.Args = append(cmd.Args, permission.Word{Value: d.Variant.Value, Literal: true})
	for _, a := range d.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			cmd.Args = append(cmd.Args, w.word(a.Value))
			continue
		}
		cmd.Assigns = append(cmd.Assigns, w.assign(a))
	}
	return cmd
}

func (w *walker) assign(a *syntax.Assign) permission.Assign {
	out := permission.Assign{}
	if a.Name != nil {
		out.Name = a.Name.Value
	}
	switch {
	case a.Array != nil || a.Index != nil:
		out.Value = permission.Word{Value: w.text(a), Literal: false}
	case a.Value != nil:
		out.Value = w.word(a.Value)
	default:
		out.Value = permission.Word{Literal: true}
	}
	return out
}

func (w *walker) text(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(w.src) || start > end {
		return ""
	}
	return w.src[start:end]
}

// word converts a shell word. Literal words have quotes and escapes
// removed; a word with an expansion, an unquoted glob or a brace
// expression is not literal and keeps its source text.
func (w *walker) word(x *syntax.Word) permission.Word {
	var b strings.Builder
	lit := true
	opened := false // an unquoted { in a piece so far
	for _, part := range x.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v, ok := unescape(p.Value)
			lit = lit && ok
			b.WriteString(v)
			// A brace expression may span quoted pieces, {"a",b}: bash
			// makes two words of it. An unquoted { and a later unquoted }
			// across pieces are taken for one.
			open, closed := braces(p.Value)
			if opened && closed && len(x.Parts) > 1 {
				lit = false
			}
			opened = opened || open
		case *syntax.SglQuoted:
			lit = lit && !p.Dollar
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			lit = lit && !p.Dollar
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					lit = false
					continue
				}
				b.WriteString(unescapeDouble(l.Value))
			}
		default:
			lit = false
		}
	}
	if !lit {
		return permission.Word{Value: w.text(x), Literal: false}
	}
	return permission.Word{Value: b.String(), Literal: true}
}

// unescape removes the backslashes of an unquoted literal. It reports
// false when the literal holds an unescaped glob (* ? [) or brace
// expression ({a,b} {1..3}), which expand at run time.
func unescape(s string) (string, bool) {
	var b strings.Builder
	ok := true
	brace := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
			}
			continue
		case '*', '?', '[':
			ok = false
		case '{':
			brace = i
		case '}':
			if brace >= 0 && (strings.Contains(s[brace:i], ",") || strings.Contains(s[brace:i], "..")) {
				ok = false
			}
		}
		b.WriteByte(c)
	}
	return b.String(), ok
}

// braces reports whether the unquoted literal s holds an unescaped { and
// an unescaped }.
func braces(s string) (open, closed bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			open = true
		case '}':
			closed = true
		}
	}
	return open, closed
}

// unescapeDouble removes the backslashes that are special inside double
// quotes.
func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (w *walker) redirect(r *syntax.Redirect) permission.Redirect {
	op := r.Op.String()
	if r.N != nil {
		op = r.N.Value + op
	}
	out := permission.Redirect{Op: op}
	if r.Word != nil {
		out.Target = w.word(r.Word)
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		out.Dup = true // the word is a delimiter or a string, not a file
	case syntax.DplIn, syntax.DplOut:
		if out.Target.Literal && isFD(out.Target.Value) {
			out.Dup = true
		} else {
			out.Write = r.Op == syntax.DplOut // >&file writes file
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		out.Write = true
	}
	return out
}

func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true // <&- closes
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// String renders a script for debugging and tests.
func String(s permission.Script) string {
	var b strings.Builder
	for _, c := range s.Commands {
		fmt.Fprintf(&b, "[%s] ", c.String())
	}
	if len(s.Risks) > 0 {
		fmt.Fprintf(&b, "risks=%v", s.Risks)
	}
	return strings.TrimSpace(b.String())
}
