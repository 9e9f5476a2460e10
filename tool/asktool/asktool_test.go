package asktool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/asktool"
)

const input = `{"questions":[{"question":"Which database?","header":"Database","options":[{"label":"Postgres","description":"a server"},{"label":"SQLite","description":"a file"}],"multiSelect":false}]}`

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		asker   asktool.Asker
		input   string
		want    string
		isError bool
	}{
		{"answered", asktool.AskerFunc(func(_ context.Context, r ask.Request) (ask.Reply, error) {
			if r.Agent != "team-lead" || r.ToolUseID != "tu1" || len(r.Questions) != 1 {
				return ask.Reply{}, errors.New("bad request")
			}
			return ask.Reply{Answers: ask.Answers{"Which database?": "SQLite"}}, nil
		}), input, `User has answered your questions: "Which database?"="SQLite". You can now continue with the user's answers in mind.`, false},
		{"declined", asktool.AskerFunc(func(context.Context, ask.Request) (ask.Reply, error) {
			return ask.Reply{Declined: true}, nil
		}), input, "Your questions were not answered: the user declined to answer.", false},
		{"nobody", nil, input, "Your questions were not answered: " + ask.NoPerson, false},
		{"no person error", asktool.AskerFunc(func(context.Context, ask.Request) (ask.Reply, error) {
			return ask.Reply{}, asktool.ErrNoPerson
		}), input, "Your questions were not answered: " + ask.NoPerson, false},
		{"an answer to another question", asktool.AskerFunc(func(context.Context, ask.Request) (ask.Reply, error) {
			return ask.Reply{Answers: ask.Answers{"What?": "x"}}, nil
		}), input, `the reply could not be used: "What?" is not one of the questions asked`, false},
		{"invalid", nil, `{"questions":[]}`, "AskUserQuestion: invalid input: ask 1 to 4 questions at a time; got 0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := asktool.New("team-lead", tt.asker).Run(t.Context(), tool.Call{ID: "tu1", Name: ask.ToolName, Input: []byte(tt.input)})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Content, tt.want) || res.IsError != tt.isError {
				t.Fatalf("Run = %+v; want IsError %v and content containing %q", res, tt.isError, tt.want)
			}
		})
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	a := asktool.AskerFunc(func(ctx context.Context, _ ask.Request) (ask.Reply, error) {
		cancel()
		<-ctx.Done()
		return ask.Reply{}, ctx.Err()
	})
	if _, err := asktool.New("x", a).Run(ctx, tool.Call{Input: []byte(input)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel = %v; want context.Canceled (the loop stops)", err)
	}
	if asktool.New("x", nil).ReadOnly(nil) {
		t.Fatal("ReadOnly = true; want false: a question waits alone")
	}
}
