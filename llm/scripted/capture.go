package scripted

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/troupe-dev/troupe/llm"
)

// capturePattern finds {{capture:REGEX}} in a reply's strings: the first
// submatch of REGEX in the conversation's user messages, newest first. It
// lets a script echo what only the run knows, such as the request id of a
// shutdown request.
var capturePattern = regexp.MustCompile(`\{\{capture:(.+?)\}\}`)

// checkCaptures compiles every capture expression of s, so that a broken
// one fails when the script loads.
func checkCaptures(s string) error {
	for _, m := range capturePattern.FindAllStringSubmatch(s, -1) {
		re, err := regexp.Compile(m[1])
		if err != nil {
			return fmt.Errorf("capture %q: %v", m[1], err)
		}
		if re.NumSubexp() < 1 {
			return fmt.Errorf("capture %q: needs a (group) to capture", m[1])
		}
	}
	return nil
}

// expand replaces the captures in s from the conversation.
func expand(s string, msgs []llm.Message) (string, error) {
	var err error
	out := capturePattern.ReplaceAllStringFunc(s, func(tok string) string {
		expr := capturePattern.FindStringSubmatch(tok)[1]
		re, cerr := regexp.Compile(expr)
		if cerr != nil {
			err = cerr
			return tok
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role != llm.RoleUser {
				continue
			}
			if m := re.FindStringSubmatch(userText(msgs[i])); m != nil {
				return m[1]
			}
		}
		if err == nil {
			err = fmt.Errorf("scripted: capture %q matched no user message", expr)
		}
		return tok
	})
	return out, err
}

// expandInput replaces the captures in the strings of a tool input.
func expandInput(input json.RawMessage, msgs []llm.Message) (json.RawMessage, error) {
	if !strings.Contains(string(input), "{{capture:") {
		return input, nil
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return nil, err
	}
	var err error
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			s, e := expand(v, msgs)
			if e != nil && err == nil {
				err = e
			}
			return s
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			for k := range v {
				v[k] = walk(v[k])
			}
		}
		return v
	}
	v = walk(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
