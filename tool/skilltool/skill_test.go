package skilltool

import (
	"context"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/tool"
)

func TestSkill(t *testing.T) {
	st := New([]Skill{{Name: "review", Description: "review a change", Dir: "/p/.claude/skills/review", Body: "1. Read the diff.\n", AllowedTools: []string{"Read", "Grep"}}})
	res, err := st.Run(context.Background(), tool.Call{Name: "Skill", Input: []byte(`{"skill":"review","args":"HEAD~1"}`)})
	if err != nil || res.IsError {
		t.Fatalf("Skill review: %v %s", err, res.Content)
	}
	for _, want := range []string{`Skill "review" loaded`, "/p/.claude/skills/review", "only these tools may run: Read, Grep", "Arguments: HEAD~1", "1. Read the diff."} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("result lacks %q:\n%s", want, res.Content)
		}
	}
	res, _ = st.Run(context.Background(), tool.Call{Name: "Skill", Input: []byte(`{"skill":"deploy"}`)})
	if !res.IsError || !strings.Contains(res.Content, `no skill "deploy"; the skills are: review`) {
		t.Errorf("unknown skill: %+v", res)
	}
	res, _ = New(nil).Run(context.Background(), tool.Call{Name: "Skill", Input: []byte(`{"skill":"x"}`)})
	if !res.IsError || !strings.Contains(res.Content, "there are no skills here") {
		t.Errorf("no skills: %+v", res)
	}
	res, _ = st.Run(context.Background(), tool.Call{Name: "Skill", Input: []byte(`{"name":"review"}`)})
	if !res.IsError {
		t.Errorf("bad input accepted: %+v", res)
	}
}
