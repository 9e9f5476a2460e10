package permission

import "strings"

// opt is what a command does with one of its options.
type opt uint8

const (
	optFlag     opt = iota // takes no value
	optValue               // takes a value: glued (-n5, --lines=5) or the next word
	optOptional            // takes a value only when glued (-U5, --color=auto)
	optFile                // takes the name of a file it reads
	optPair                // takes two words, a name and a value (jq --arg NAME VALUE)
	optPairFile            // takes a name and a file it reads (jq --rawfile NAME FILE)
	optBad                 // writes files, runs programs or reads files it cannot be judged on
)

// options maps an option as written ("-n", "--lines", or a long option
// with one dash such as xxd's "-cols") to what it takes.
type options map[string]opt

// opts parses an option list such as "-n= -q --lines= --output!": a bare
// name is a flag, and a suffix says what the option takes: = a value, ?
// a value only when glued, @ a file to read, & a name and a value, &@ a
// name and a file, ! nothing (the option is refused). It panics on a
// malformed list, which is a programming error in a table below.
func opts(list ...string) options {
	out := options{}
	for _, l := range list {
		for _, f := range strings.Fields(l) {
			name, kind := f, optFlag
			for _, s := range []struct {
				suffix string
				kind   opt
			}{{"&@", optPairFile}, {"=", optValue}, {"?", optOptional}, {"@", optFile}, {"&", optPair}, {"!", optBad}} {
				if n, ok := strings.CutSuffix(f, s.suffix); ok {
					name, kind = n, s.kind
					break
				}
			}
			if len(name) < 2 || name[0] != '-' || name == "--" {
				panic("permission: bad option spec " + f)
			}
			out[name] = kind
		}
	}
	return out
}

// parsed is a command line split by its option table.
type parsed struct {
	operands []string          // arguments that are not options or their values
	files    []string          // values of options that name files to read
	seen     map[string]string // options given, by name, with their last value
	bad      string            // the first option that is refused or unknown, as written
	why      string            // why bad is refused
}

func (p *parsed) has(names ...string) bool {
	for _, n := range names {
		if _, ok := p.seen[n]; ok {
			return true
		}
	}
	return false
}

// parseArgs splits args by the table o. Short options may be combined
// (-rn) and take their value glued (-fFILE, -n5) or as the next word;
// long options take it after = or as the next word; after "--" every word
// is an operand. With nums, -NUM is a flag (head -5). An option not in o
// is refused: GNU tools accept abbreviations of long options, and an
// unknown option may be one of a refused option.
func parseArgs(o options, args []string, nums bool) parsed {
	p := parsed{seen: map[string]string{}}
	refuse := func(a, why string) {
		if p.bad == "" {
			p.bad, p.why = a, why
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			p.operands = append(p.operands, args[i+1:]...)
			return p
		case a == "-" || !strings.HasPrefix(a, "-"):
			p.operands = append(p.operands, a)
		case strings.HasPrefix(a, "--"):
			name, val, glued := strings.Cut(a, "=")
			kind, ok := o[name]
			if !ok {
				refuse(a, "is not a known option")
				continue
			}
			i = p.take(kind, name, val, glued, args, i, refuse)
		case nums && allDigits(a[1:]):
			p.seen["-#"] = a[1:]
		case len(a) > 2 && hasKey(o, a):
			i = p.take(o[a], a, "", false, args, i, refuse)
		default:
			for j := 1; j < len(a); j++ {
				name := "-" + a[j:j+1]
				kind, ok := o[name]
				if !ok {
					refuse(a, "is not a known option")
					break
				}
				if kind == optFlag || kind == optBad {
					p.take(kind, name, "", false, args, i, refuse)
					continue
				}
				rest := a[j+1:]
				i = p.take(kind, name, rest, rest != "", args, i, refuse)
				break
			}
		}
	}
	return p
}

// take records option name of the given kind with its value (glued
// when glued is set) and returns the index of the last word it used.
func (p *parsed) take(kind opt, name, val string, glued bool, args []string, i int, refuse func(a, why string)) int {
	switch kind {
	case optBad:
		refuse(name, "may write files, run programs or read files that cannot be checked")
	case optFlag:
		if glued {
			refuse(name+"="+val, "takes no value")
		}
	case optOptional:
	case optValue, optFile:
		if !glued {
			if i+1 >= len(args) {
				refuse(name, "lacks its value")
				break
			}
			i++
			val = args[i]
		}
		if kind == optFile {
			p.files = append(p.files, val)
		}
	case optPair, optPairFile:
		if glued || i+2 >= len(args) {
			refuse(name, "takes two words")
			break
		}
		val = args[i+2]
		i += 2
		if kind == optPairFile {
			p.files = append(p.files, val)
		}
	}
	p.seen[name] = val
	return i
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func hasKey(o options, k string) bool {
	_, ok := o[k]
	return ok
}
