package workflow

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/token"
)

// ErrNoMeta is wrapped by Parse's error for a script without
// `export const meta = {...}`.
var ErrNoMeta = errors.New("workflow: no `export const meta = {...}`")

// Meta is a script's `export const meta` literal.
type Meta struct {
	Name        string
	Description string
	Phases      []Phase
	// Raw is the whole literal as JSON-like Go values (keys beyond these
	// three, such as whenToUse, are kept here).
	Raw map[string]any
}

// Phase is one entry of meta.phases.
type Phase struct {
	Title  string
	Detail string
}

// HasPhase reports whether title is one of m's phases.
func (m Meta) HasPhase(title string) bool {
	for _, p := range m.Phases {
		if p.Title == title {
			return true
		}
	}
	return false
}

// PhaseTitles returns the titles of m's phases, in order.
func (m Meta) PhaseTitles() []string {
	var out []string
	for _, p := range m.Phases {
		out = append(out, p.Title)
	}
	return out
}

// Script is a parsed workflow script, ready to Run (any number of times).
type Script struct {
	Name   string // the file name used in errors and stacks
	Source string // as given
	Meta   Meta
	prog   *goja.Program
}

// SyntaxError is a script that does not parse, or whose meta is not a
// pure literal; Line is 1-based in the script as given.
type SyntaxError struct {
	Name string
	Line int
	Msg  string
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// wrapPrefix opens the async function the body runs in. It holds no
// newline, so a line of the wrapped source is the same line of the
// script; only columns of the first line are shifted (by len(wrapPrefix)).
const wrapPrefix = "(async function(){"

var exportMeta = regexp.MustCompile(`(?m)^([ \t]*)export([ \t]+const[ \t]+meta\b)`)

// Parse reads src: it checks its syntax and reads its meta literal without
// running anything. A meta that is not a pure literal (a call, a variable,
// a template with substitutions, a computed key, a spread) is refused with
// a SyntaxError naming its line.
func Parse(name, src string) (*Script, error) {
	if name == "" {
		name = "workflow.js"
	}
	loc := exportMeta.FindStringSubmatchIndex(src)
	if loc == nil {
		return nil, fmt.Errorf("parse %s: %w (a workflow starts with export const meta = { name, description, phases: [{ title }] })", name, ErrNoMeta)
	}
	// Blank the keyword, keeping every column.
	body := src[:loc[3]] + strings.Repeat(" ", len("export")) + src[loc[3]+len("export"):]
	wrapped := wrapPrefix + body + "\n})"
	prg, err := goja.Parse(name, wrapped)
	if err != nil {
		return nil, syntaxError(name, err)
	}
	fn := wrappedFunc(prg)
	if fn == nil {
		return nil, &SyntaxError{Name: name, Line: 1, Msg: "the script closes its own wrapper: a stray `})`?"}
	}
	var init ast.Expression
	var at file.Idx
	for _, st := range fn.Body.List {
		if d, ok := st.(*ast.LexicalDeclaration); ok {
			for _, b := range d.List {
				if id, ok := b.Target.(*ast.Identifier); ok && id.Name == "meta" {
					init, at = b.Initializer, id.Idx
				}
			}
		}
		if init != nil {
			break
		}
	}
	pos := func(idx file.Idx) int { return prg.File.Position(int(idx) - prg.File.Base()).Line }
	if init == nil {
		return nil, &SyntaxError{Name: name, Line: pos(at), Msg: "meta has no value"}
	}
	v, err := literal(init, pos)
	if err != nil {
		return nil, &SyntaxError{Name: name, Line: err.(*litError).line, Msg: err.(*litError).msg}
	}
	m, err := metaOf(v)
	if err != nil {
		return nil, &SyntaxError{Name: name, Line: pos(init.Idx0()), Msg: err.Error()}
	}
	p, err := goja.CompileAST(prg, false)
	if err != nil {
		return nil, syntaxError(name, err)
	}
	return &Script{Name: name, Source: src, Meta: m, prog: p}, nil
}

// wrappedFunc returns the function literal the wrapper made, or nil.
func wrappedFunc(prg *ast.Program) *ast.FunctionLiteral {
	if len(prg.Body) != 1 {
		return nil
	}
	es, ok := prg.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	fn, _ := es.Expression.(*ast.FunctionLiteral)
	return fn
}

var lineInMsg = regexp.MustCompile(`Line (\d+):(\d+) (.*)`)

// syntaxError turns goja's parse or compile error into a SyntaxError.
func syntaxError(name string, err error) error {
	msg, line := err.Error(), 0
	if m := lineInMsg.FindStringSubmatch(msg); m != nil {
		fmt.Sscan(m[1], &line)
		msg = m[3]
	}
	if line == 0 {
		line = 1
	}
	return &SyntaxError{Name: name, Line: line, Msg: strings.TrimSpace(msg)}
}

type litError struct {
	line int
	msg  string
}

func (e *litError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// literal evaluates a pure literal expression: objects, arrays, strings,
// numbers, booleans, null, templates without substitutions and negated
// numbers. Anything else is a litError at its line.
func literal(e ast.Expression, pos func(file.Idx) int) (any, error) {
	refuse := func(what string) error {
		return &litError{line: pos(e.Idx0()), msg: "meta must be a literal: " + what + " is computed (write the value itself)"}
	}
	switch x := e.(type) {
	case *ast.StringLiteral:
		return x.Value.String(), nil
	case *ast.NumberLiteral:
		switch n := x.Value.(type) {
		case int64:
			return float64(n), nil
		case float64:
			return n, nil
		}
		return nil, refuse("a number")
	case *ast.BooleanLiteral:
		return x.Value, nil
	case *ast.NullLiteral:
		return nil, nil
	case *ast.TemplateLiteral:
		if x.Tag != nil || len(x.Expressions) > 0 {
			return nil, refuse("a template with ${...}")
		}
		var b strings.Builder
		for _, el := range x.Elements {
			b.WriteString(el.Parsed.String())
		}
		return b.String(), nil
	case *ast.UnaryExpression:
		if x.Operator == token.MINUS && !x.Postfix {
			v, err := literal(x.Operand, pos)
			if f, ok := v.(float64); err == nil && ok {
				return -f, nil
			}
		}
		return nil, refuse("an operator expression")
	case *ast.ArrayLiteral:
		out := make([]any, 0, len(x.Value))
		for _, el := range x.Value {
			if el == nil {
				return nil, refuse("an array hole")
			}
			v, err := literal(el, pos)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *ast.ObjectLiteral:
		out := map[string]any{}
		for _, p := range x.Value {
			switch p := p.(type) {
			case *ast.PropertyKeyed:
				if p.Computed || p.Kind != ast.PropertyKindValue {
					return nil, &litError{line: pos(p.Key.Idx0()), msg: "meta must be a literal: a computed key, getter or method"}
				}
				var key string
				switch k := p.Key.(type) {
				case *ast.StringLiteral:
					key = k.Value.String()
				case *ast.Identifier:
					key = k.Name.String()
				case *ast.NumberLiteral:
					key = k.Literal
				default:
					return nil, &litError{line: pos(p.Key.Idx0()), msg: "meta must be a literal: a computed key"}
				}
				v, err := literal(p.Value, pos)
				if err != nil {
					return nil, err
				}
				out[key] = v
			case *ast.PropertyShort:
				return nil, &litError{line: pos(p.Name.Idx), msg: fmt.Sprintf("meta must be a literal: the shorthand %q names a variable", p.Name.Name)}
			default:
				return nil, &litError{line: pos(p.Idx0()), msg: "meta must be a literal: a spread or method"}
			}
		}
		return out, nil
	case *ast.Identifier:
		if x.Name == "undefined" {
			return nil, nil
		}
		return nil, &litError{line: pos(x.Idx), msg: fmt.Sprintf("meta must be a literal: %s is a variable", x.Name)}
	case *ast.CallExpression:
		return nil, refuse("a call")
	}
	return nil, refuse("this expression")
}

// metaOf checks the shape of a meta literal.
func metaOf(v any) (Meta, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Meta{}, errors.New("meta must be an object")
	}
	m := Meta{Raw: obj}
	str := func(k string) (string, error) {
		switch s := obj[k].(type) {
		case nil:
			return "", nil
		case string:
			return s, nil
		}
		return "", fmt.Errorf("meta.%s must be a string", k)
	}
	var err error
	if m.Name, err = str("name"); err != nil {
		return Meta{}, err
	}
	if m.Description, err = str("description"); err != nil {
		return Meta{}, err
	}
	switch ps := obj["phases"].(type) {
	case nil:
	case []any:
		seen := map[string]bool{}
		for i, p := range ps {
			po, ok := p.(map[string]any)
			if !ok {
				return Meta{}, fmt.Errorf("meta.phases[%d] must be an object { title, detail? }", i)
			}
			t, ok := po["title"].(string)
			if !ok || strings.TrimSpace(t) == "" {
				return Meta{}, fmt.Errorf("meta.phases[%d].title must be a non-empty string", i)
			}
			if seen[t] {
				return Meta{}, fmt.Errorf("meta.phases[%d].title %q is given twice", i, t)
			}
			seen[t] = true
			d, _ := po["detail"].(string)
			m.Phases = append(m.Phases, Phase{Title: t, Detail: d})
		}
	default:
		return Meta{}, errors.New("meta.phases must be an array")
	}
	return m, nil
}
