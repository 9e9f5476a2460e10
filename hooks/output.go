package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Output is the JSON a hook may print on stdout when it exits 0.
type Output struct {
	Continue       *bool     `json:"continue"`
	StopReason     string    `json:"stopReason"`
	SuppressOutput bool      `json:"suppressOutput"`
	SystemMessage  string    `json:"systemMessage"`
	Decision       string    `json:"decision"` // "block" (or the deprecated "approve")
	Reason         string    `json:"reason"`
	Specific       *Specific `json:"hookSpecificOutput"`
}

// Specific is an Output's hookSpecificOutput.
type Specific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"` // PreToolUse: allow, deny, ask
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
	// Decision is PermissionRequest's answer.
	Decision *PermissionAnswer `json:"decision"`
}

// PermissionAnswer is a PermissionRequest hook's decision.
type PermissionAnswer struct {
	Behavior     string          `json:"behavior"` // allow or deny
	Message      string          `json:"message"`  // for the model, on deny
	UpdatedInput json.RawMessage `json:"updatedInput"`
}

// ParseOutput reads a hook's stdout. Output that does not start with "{"
// is plain text (ok false, no error); a JSON object that does not decode
// into Output, or a decision or permissionDecision of an unknown value, is
// an error saying what is wrong.
func ParseOutput(stdout []byte) (out Output, ok bool, err error) {
	s := bytes.TrimSpace(stdout)
	if len(s) == 0 || s[0] != '{' {
		return Output{}, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(s))
	if err := dec.Decode(&out); err != nil {
		return Output{}, false, fmt.Errorf("stdout is not valid hook JSON: %v", err)
	}
	if dec.More() {
		return Output{}, false, fmt.Errorf("stdout has text after the JSON object")
	}
	switch out.Decision {
	case "", "block", "approve":
	default:
		return Output{}, false, fmt.Errorf("decision %q: want block", out.Decision)
	}
	if sp := out.Specific; sp != nil {
		switch sp.PermissionDecision {
		case "", "allow", "deny", "ask":
		default:
			return Output{}, false, fmt.Errorf("hookSpecificOutput.permissionDecision %q: want allow, deny or ask", sp.PermissionDecision)
		}
		if pa := sp.Decision; pa != nil {
			if pa.Behavior != "allow" && pa.Behavior != "deny" {
				return Output{}, false, fmt.Errorf("hookSpecificOutput.decision.behavior %q: want allow or deny", pa.Behavior)
			}
			if len(pa.UpdatedInput) > 0 && string(pa.UpdatedInput) != "null" {
				var obj map[string]json.RawMessage
				if json.Unmarshal(pa.UpdatedInput, &obj) != nil {
					return Output{}, false, fmt.Errorf("hookSpecificOutput.decision.updatedInput is not a JSON object")
				}
			} else {
				pa.UpdatedInput = nil
			}
		}
		if len(sp.UpdatedInput) > 0 && string(sp.UpdatedInput) != "null" {
			var obj map[string]json.RawMessage
			if json.Unmarshal(sp.UpdatedInput, &obj) != nil {
				return Output{}, false, fmt.Errorf("hookSpecificOutput.updatedInput is not a JSON object")
			}
		} else {
			sp.UpdatedInput = nil
		}
	}
	return out, true, nil
}
