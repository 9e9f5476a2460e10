package workflow

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
)

// claudeStyle is written as Claude Code's Workflow documentation writes
// scripts: a literal meta with phases and whenToUse, phase() calls,
// destructuring of a schema answer, template literals, parallel over
// thunks, pipeline, log and a returned object.
const claudeStyle = `export const meta = {
  name: 'audit-endpoints',
  description: 'Audit every API endpoint for auth issues, then verify the findings',
  whenToUse: 'When the user asks for an endpoint audit',
  phases: [
    { title: 'Discover', detail: 'List the endpoints' },
    { title: 'Audit', detail: 'One agent per endpoint' },
    { title: 'Verify' },
  ],
}

phase('Discover')
const { endpoints } = await agent('List every HTTP endpoint in src/api', {
  label: 'discover',
  schema: {
    type: 'object',
    properties: { endpoints: { type: 'array', items: { type: 'string' } } },
    required: ['endpoints'],
  },
})

phase('Audit')
const findings = await parallel(
  endpoints.map((ep) => () => agent(` + "`Audit ${ep} for missing auth checks`" + `, { label: ep, phase: 'Audit' })),
)

phase('Verify')
const verified = await pipeline(
  findings.filter(Boolean),
  (f) => agent(` + "`Verify this finding: ${f}`" + `, { label: 'verify', phase: 'Verify', model: 'haiku' }),
  (v) => v.trim(),
)
log(` + "`verified ${verified.length} of ${findings.length}`" + `)
return { endpoints, verified }
`

func TestClaudeCodeStyleScript(t *testing.T) {
	var verifies atomic.Int32
	rn := RunnerFunc(func(ctx context.Context, req Request) (Reply, error) {
		switch {
		case req.Label == "discover":
			return Reply{Text: `{"endpoints": ["/login", "/admin"]}`}, nil
		case strings.HasPrefix(req.Prompt, "Audit /admin"):
			return Reply{Text: "/admin has no auth check"}, nil
		case strings.HasPrefix(req.Prompt, "Audit"):
			return Reply{Text: "/login is fine"}, nil
		case strings.HasPrefix(req.Prompt, "Verify"):
			verifies.Add(1)
			if req.Model != "haiku" || req.Phase != "Verify" {
				t.Errorf("verify request = %+v", req)
			}
			return Reply{Text: "  confirmed: " + strings.TrimPrefix(req.Prompt, "Verify this finding: ") + "  "}, nil
		}
		t.Errorf("unexpected prompt %q", req.Prompt)
		return Reply{}, nil
	})
	s := mustParse(t, claudeStyle)
	if s.Meta.Raw["whenToUse"] != "When the user asks for an endpoint audit" || len(s.Meta.Phases) != 3 || s.Meta.Phases[1].Detail != "One agent per endpoint" {
		t.Errorf("meta = %+v", s.Meta)
	}
	var logs []string
	res, err := Run(t.Context(), s, nil, rn, Options{Observer: func(e Event) {
		if e.Kind == EventLog {
			logs = append(logs, e.Text)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"endpoints":["/login","/admin"],"verified":["confirmed: /login is fine","confirmed: /admin has no auth check"]}`
	if string(res.Value) != want {
		t.Errorf("value = %s; want %s", res.Value, want)
	}
	if verifies.Load() != 2 || len(logs) != 1 || logs[0] != "verified 2 of 2" {
		t.Errorf("verifies %d, logs %q", verifies.Load(), logs)
	}
}
