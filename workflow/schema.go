package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// compileSchema reads a JSON Schema.
func compileSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return rs, nil
}

// schemaNote is what an agent with a schema is told.
func schemaNote(raw json.RawMessage) string {
	return "\n\nEnd your work with a final message that is only a JSON value (no prose, no code fence) that validates against this JSON Schema:\n" + string(raw)
}

// retryNote tells the agent why its answer was refused.
func retryNote(raw json.RawMessage, answer string, verr error) string {
	const max = 4000
	if len(answer) > max {
		answer = answer[:max] + "…"
	}
	return "\n\nA previous answer to this task was refused: it did not validate against the JSON Schema.\nThe answer was:\n" + answer +
		"\nThe validation error: " + verr.Error() + "\nReply with only a JSON value that validates against:\n" + string(raw)
}

// errNoJSON is an answer with no JSON value in it.
var errNoJSON = errors.New("the answer holds no JSON value")

// decodeAnswer finds the JSON value of an agent's answer (the whole text,
// a fenced block, or the outermost object or array in it), validates it
// against rs and returns it compacted.
func decodeAnswer(text string, rs *jsonschema.Resolved) (json.RawMessage, error) {
	raw, err := extractJSON(text)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("the answer is not valid JSON: %w", err)
	}
	if err := rs.Validate(v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// extractJSON returns the JSON value of text.
func extractJSON(text string) ([]byte, error) {
	t := strings.TrimSpace(text)
	if json.Valid([]byte(t)) {
		return []byte(t), nil
	}
	if i := strings.Index(t, "```"); i >= 0 {
		rest := t[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
			if j := strings.Index(rest, "```"); j >= 0 {
				if c := strings.TrimSpace(rest[:j]); json.Valid([]byte(c)) {
					return []byte(c), nil
				}
			}
		}
	}
	for _, pair := range [][2]byte{{'{', '}'}, {'[', ']'}} {
		i, j := strings.IndexByte(t, pair[0]), strings.LastIndexByte(t, pair[1])
		if i >= 0 && j > i && json.Valid([]byte(t[i:j+1])) {
			return []byte(t[i : j+1]), nil
		}
	}
	return nil, errNoJSON
}
