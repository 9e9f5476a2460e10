// Package ask is the vocabulary of the questions an agent puts to a
// person (the AskUserQuestion tool, docs/ask.md): a question with a short
// header and two to four options, each with a label, a description and an
// optional preview, answered by choosing one option (or several, with
// MultiSelect) or by writing a free-text "Other" answer.
//
// Parse checks a tool input and names what is wrong in words a model can
// act on; Answers.Check checks a reply against the questions; Result and
// Unanswered are the tool results the model reads. Everything here is
// pure and safe for concurrent use.
package ask

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ToolName is the tool's name, as Claude Code spells it. Permission
// requests with this tool name are questions (docs/ask.md).
const ToolName = "AskUserQuestion"

// Bounds of a question set.
const (
	MaxQuestions = 4
	MinOptions   = 2
	MaxOptions   = 4
	MaxHeader    = 12    // characters of a header chip
	MaxLabel     = 60    // characters of an option label
	MaxQuestion  = 1000  // characters of a question
	MaxText      = 4000  // characters of a description
	MaxPreview   = 20000 // characters of a preview
)

// Other is the label of the free-text answer every question offers.
const Other = "Other"

// Option is one choice of a question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	// Preview is shown beside the options while this one is focused:
	// a mockup, a code snippet, a comparison.
	Preview string `json:"preview,omitempty"`
}

// Question is one question.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []Option `json:"options"`
	MultiSelect bool     `json:"multiSelect"`
}

// Input is the tool's input.
type Input struct {
	Questions []Question `json:"questions"`
}

// Answers maps each question's text to its answer: the label chosen, the
// labels chosen joined by ", " (MultiSelect), or the person's own text.
type Answers map[string]string

// Reply is how a set of questions was answered.
type Reply struct {
	// Answers is set when the person answered (some questions may be
	// left out).
	Answers Answers
	// Declined says the person (or whoever answers for the session)
	// chose not to answer; Reason says why, in words for the model.
	Declined bool
	Reason   string
}

// Request is a set of questions waiting for a Reply.
type Request struct {
	Agent     string // who asks: team-lead or a teammate's name
	ToolUseID string
	Questions []Question
}

// Parse decodes and checks a tool input: one to four questions, each
// with a question, a header of at most 12 characters and two to four
// options with distinct, non-empty labels and descriptions; question
// texts are distinct (they key the answers). The error names the first
// problem, by question and option number.
func Parse(raw json.RawMessage) (Input, error) {
	var in Input
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return Input{}, fmt.Errorf("the input is not {\"questions\":[{\"question\",\"header\",\"options\":[{\"label\",\"description\",\"preview\"?}],\"multiSelect\"}]}: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return in, in.Check()
}

// Check checks the questions as Parse does.
func (in Input) Check() error {
	n := len(in.Questions)
	if n == 0 || n > MaxQuestions {
		return fmt.Errorf("ask 1 to %d questions at a time; got %d", MaxQuestions, n)
	}
	seen := map[string]int{}
	for i, q := range in.Questions {
		at := fmt.Sprintf("question %d", i+1)
		switch {
		case strings.TrimSpace(q.Question) == "":
			return fmt.Errorf("%s: the question text is empty", at)
		case utf8.RuneCountInString(q.Question) > MaxQuestion:
			return fmt.Errorf("%s: the question is %d characters long; keep it under %d", at, utf8.RuneCountInString(q.Question), MaxQuestion)
		case strings.TrimSpace(q.Header) == "":
			return fmt.Errorf("%s: the header is empty; give a short label (at most %d characters) such as \"Database\"", at, MaxHeader)
		case utf8.RuneCountInString(q.Header) > MaxHeader:
			return fmt.Errorf("%s: the header %q is %d characters long; use at most %d", at, q.Header, utf8.RuneCountInString(q.Header), MaxHeader)
		case len(q.Options) < MinOptions || len(q.Options) > MaxOptions:
			return fmt.Errorf("%s: give %d to %d options; got %d (the person can always answer %q in their own words, so do not add an option for that)", at, MinOptions, MaxOptions, len(q.Options), Other)
		}
		if j, dup := seen[q.Question]; dup {
			return fmt.Errorf("question %d repeats the text of question %d; question texts must differ (they key the answers)", i+1, j)
		}
		seen[q.Question] = i + 1
		labels := map[string]int{}
		for k, o := range q.Options {
			oat := fmt.Sprintf("%s, option %d", at, k+1)
			label := strings.TrimSpace(o.Label)
			switch {
			case label == "":
				return fmt.Errorf("%s: the label is empty", oat)
			case utf8.RuneCountInString(o.Label) > MaxLabel:
				return fmt.Errorf("%s: the label is %d characters long; keep labels to a few words (at most %d characters) and put the rest in the description", oat, utf8.RuneCountInString(o.Label), MaxLabel)
			case strings.EqualFold(label, Other):
				return fmt.Errorf("%s: do not offer %q: every question has a free-text %q answer already", oat, Other, Other)
			case strings.TrimSpace(o.Description) == "":
				return fmt.Errorf("%s (%q): the description is empty; say what choosing it means", oat, o.Label)
			case utf8.RuneCountInString(o.Description) > MaxText:
				return fmt.Errorf("%s (%q): the description is longer than %d characters", oat, o.Label, MaxText)
			case utf8.RuneCountInString(o.Preview) > MaxPreview:
				return fmt.Errorf("%s (%q): the preview is longer than %d characters", oat, o.Label, MaxPreview)
			}
			key := strings.ToLower(label)
			if j, dup := labels[key]; dup {
				return fmt.Errorf("%s: the label %q repeats option %d's; labels of one question must differ", oat, o.Label, j)
			}
			labels[key] = k + 1
		}
	}
	return nil
}

// Check checks answers against the questions: each key is one of the
// questions' texts and each answer is non-empty. An answer need not be
// one of the labels (it may be the person's own text).
func (a Answers) Check(qs []Question) error {
	if len(a) == 0 {
		return errors.New("no question was answered")
	}
	for k, v := range a {
		if !slices.ContainsFunc(qs, func(q Question) bool { return q.Question == k }) {
			return fmt.Errorf("%q is not one of the questions asked", k)
		}
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("the answer to %q is empty", k)
		}
	}
	return nil
}

// Join is the answer of a MultiSelect question with these labels chosen.
func Join(labels []string) string { return strings.Join(labels, ", ") }

// Result is the tool result that gives the model the answers, in the
// questions' order, as Claude Code words it.
func Result(qs []Question, a Answers) string {
	var parts []string
	for _, q := range qs {
		if v, ok := a[q.Question]; ok {
			parts = append(parts, fmt.Sprintf("%q=%q", q.Question, v))
		}
	}
	s := "User has answered your questions: " + strings.Join(parts, ", ") + ". You can now continue with the user's answers in mind."
	if len(parts) < len(qs) {
		s += " The questions not listed were left unanswered: use your best judgement for them and say what you assumed."
	}
	return s
}

// NoPerson is why nobody answers in a session without a person or a
// program to ask.
const NoPerson = "no person is available to answer questions in this session (it runs headless, without a --permission-prompt-command)"

// Unanswered is the tool result when the questions got no answer: the
// model goes on with stated assumptions rather than waiting.
func Unanswered(r Reply) string {
	why := r.Reason
	if why == "" {
		why = "the user declined to answer"
	}
	return "Your questions were not answered: " + why + ". Do not ask them again now: continue with the option you judge best for each question, and state in your reply which assumptions you made."
}

// WithAnswers returns the tool input with the answers added under
// "answers": how an answer travels back in a permission response's
// updated input (Claude Code's SDK returns AskUserQuestion answers that
// way too, docs/ask.md).
func WithAnswers(input json.RawMessage, a Answers) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(input, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the question's input is not a JSON object: %.100s", input)
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	obj["answers"] = b
	return json.Marshal(obj)
}

// AnswersOf reads the answers WithAnswers put in an updated input; false
// when it holds none.
func AnswersOf(updated json.RawMessage) (Answers, bool) {
	var v struct {
		Answers Answers `json:"answers"`
	}
	if json.Unmarshal(updated, &v) != nil || len(v.Answers) == 0 {
		return nil, false
	}
	return v.Answers, true
}

// Summary is a one-line view of a question set for timelines: the first
// question, and how many more.
func Summary(qs []Question) string {
	if len(qs) == 0 {
		return ""
	}
	s := qs[0].Question
	if len(qs) > 1 {
		s += fmt.Sprintf(" (+%d more)", len(qs)-1)
	}
	return s
}
