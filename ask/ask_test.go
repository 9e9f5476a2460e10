package ask_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/ask"
)

func opts(labels ...string) []ask.Option {
	out := make([]ask.Option, len(labels))
	for i, l := range labels {
		out[i] = ask.Option{Label: l, Description: "means " + l}
	}
	return out
}

func TestParse(t *testing.T) {
	good := ask.Question{Question: "Which database?", Header: "Database", Options: opts("Postgres", "SQLite")}
	tests := []struct {
		name string
		in   any
		want string // a part of the error; "" for none
	}{
		{"one question", ask.Input{Questions: []ask.Question{good}}, ""},
		{"no questions", ask.Input{}, "ask 1 to 4 questions at a time; got 0"},
		{"five questions", ask.Input{Questions: []ask.Question{
			good, {Question: "b?", Header: "b", Options: opts("x", "y")}, {Question: "c?", Header: "c", Options: opts("x", "y")},
			{Question: "d?", Header: "d", Options: opts("x", "y")}, {Question: "e?", Header: "e", Options: opts("x", "y")}}}, "got 5"},
		{"long header", ask.Input{Questions: []ask.Question{{Question: "q?", Header: "A very long header", Options: opts("x", "y")}}}, `question 1: the header "A very long header" is 18 characters long; use at most 12`},
		{"empty header", ask.Input{Questions: []ask.Question{{Question: "q?", Options: opts("x", "y")}}}, "the header is empty"},
		{"one option", ask.Input{Questions: []ask.Question{{Question: "q?", Header: "h", Options: opts("x")}}}, "give 2 to 4 options; got 1"},
		{"five options", ask.Input{Questions: []ask.Question{{Question: "q?", Header: "h", Options: opts("a", "b", "c", "d", "e")}}}, "got 5"},
		{"duplicate labels", ask.Input{Questions: []ask.Question{{Question: "q?", Header: "h", Options: opts("Yes", "yes")}}}, `question 1, option 2: the label "yes" repeats option 1's`},
		{"an Other option", ask.Input{Questions: []ask.Question{{Question: "q?", Header: "h", Options: opts("a", "other")}}}, `do not offer "Other"`},
		{"no description", ask.Input{Questions: []ask.Question{{Question: "q?", Header: "h", Options: []ask.Option{{Label: "a", Description: "x"}, {Label: "b"}}}}}, `option 2 ("b"): the description is empty`},
		{"duplicate questions", ask.Input{Questions: []ask.Question{good, good}}, "question 2 repeats the text of question 1"},
		{"empty question", ask.Input{Questions: []ask.Question{{Header: "h", Options: opts("a", "b")}}}, "question 1: the question text is empty"},
		{"long label", ask.Input{Questions: []ask.Question{{Question: "q?", Header: "h", Options: opts("a", strings.Repeat("x", 61))}}}, "keep labels to a few words"},
		{"unknown field", map[string]any{"questions": []any{}, "answers": map[string]string{}}, `unknown field "answers"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(tt.in)
			_, err := ask.Parse(raw)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Parse(%s) = %v; want no error", raw, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Parse(%s) = %v; want an error containing %q", raw, err, tt.want)
			}
		})
	}
}

func TestResult(t *testing.T) {
	qs := []ask.Question{{Question: "Which database?"}, {Question: "Which features?"}}
	got := ask.Result(qs, ask.Answers{"Which features?": ask.Join([]string{"Auth", "Search"}), "Which database?": "Postgres"})
	want := `User has answered your questions: "Which database?"="Postgres", "Which features?"="Auth, Search". You can now continue with the user's answers in mind.`
	if got != want {
		t.Fatalf("Result = %q; want %q", got, want)
	}
	if got := ask.Result(qs, ask.Answers{"Which database?": "x"}); !strings.Contains(got, "left unanswered") {
		t.Fatalf("Result with one of two answers = %q; want it to say the rest were left unanswered", got)
	}
}

func TestAnswersCheck(t *testing.T) {
	qs := []ask.Question{{Question: "A?"}}
	for _, tt := range []struct {
		a    ask.Answers
		want string
	}{
		{ask.Answers{"A?": "yes"}, ""},
		{nil, "no question was answered"},
		{ask.Answers{"B?": "yes"}, `"B?" is not one of the questions asked`},
		{ask.Answers{"A?": " "}, "empty"},
	} {
		err := tt.a.Check(qs)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Answers(%v).Check = %v; want %q", tt.a, err, tt.want)
		}
	}
}

// FuzzParse: no input makes Parse panic, and what it accepts holds to
// the bounds.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"questions":[{"question":"Which?","header":"H","options":[{"label":"a","description":"x"},{"label":"b","description":"y","preview":"p"}],"multiSelect":true}]}`))
	f.Add([]byte(`{"questions":[]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		in, err := ask.Parse(raw)
		if err != nil {
			return
		}
		if n := len(in.Questions); n < 1 || n > ask.MaxQuestions {
			t.Fatalf("accepted %d questions", n)
		}
		for _, q := range in.Questions {
			if len(q.Options) < ask.MinOptions || len(q.Options) > ask.MaxOptions {
				t.Fatalf("accepted %d options", len(q.Options))
			}
		}
	})
}
