package hooks

import "testing"

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"hooks":{"PreToolUse":[{"matcher":"Bash|Edit","hooks":[{"type":"command","command":"x","timeout":30}]}]}}`,
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}],"Bogus":[]}}`,
		`{"hooks":{"PreToolUse":[{"matcher":"mcp__.*","hooks":[{"type":"prompt"}]}]}}`,
		`{"hooks":null}`, `[]`, ``, `{"hooks":{"Stop":[{"matcher":"(","hooks":[]}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, _, _, err := Parse("f", b)
		if err != nil && len(hs) > 0 {
			t.Fatalf("Parse returned hooks with an error")
		}
		for _, h := range hs {
			if h.Command == "" || h.Timeout <= 0 {
				t.Fatalf("Parse() hook %+v: empty command or no timeout", h)
			}
			h.Matches("Bash")
		}
	})
}

func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{
		`{"continue":false,"stopReason":"x"}`,
		`{"decision":"block","reason":"no"}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r","updatedInput":{"command":"ls"}}}`,
		`plain text`, `{"decision":"maybe"}`, `{} {}`, `{"hookSpecificOutput":{"updatedInput":[1]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, ok, err := ParseOutput(b)
		if err != nil && ok {
			t.Fatalf("ParseOutput() ok with an error")
		}
		if ok && out.Specific != nil {
			switch out.Specific.PermissionDecision {
			case "", "allow", "deny", "ask":
			default:
				t.Fatalf("ParseOutput() accepted permissionDecision %q", out.Specific.PermissionDecision)
			}
		}
	})
}
