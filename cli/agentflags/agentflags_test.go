package agentflags

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/anthropic"
	"github.com/troupe-dev/troupe/llm/openai"
	"github.com/troupe-dev/troupe/permission"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The provider is picked by the flags, then the environment; each way it
// can fail names what to do.
func TestModelOpen(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(script, []byte(`{"model": "scripted-x", "turns": [{"reply": {"text": "hi"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		m        Model
		env      map[string]string
		provider string // of the opened model
		err      string // a part of the error; "" for none
		usage    bool
	}{
		{"script alone picks scripted", Model{Script: script}, nil, "scripted", "", false},
		{"anthropic key", Model{}, map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "o"}, "anthropic", "", false},
		{"openai base url", Model{Name: "m"}, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, "openai", "", false},
		{"nothing configured", Model{}, nil, "", "no model configured", false},
		{"scripted without a script", Model{Provider: "scripted"}, nil, "", "--provider scripted needs --script", true},
		{"unknown provider", Model{Provider: "gemini"}, nil, "", `--provider "gemini"`, true},
		{"openai without a model", Model{Provider: "openai"}, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, "", "give one with --model NAME", false},
		{"unreadable script", Model{Script: script + ".missing"}, nil, "", "--script:", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := c.m.Open(env(c.env))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v; want one containing %q", err, c.err)
				}
				var ue *cli.UsageError
				if errors.As(err, &ue) != c.usage {
					t.Errorf("err %v: a usage error is %v; want %v", err, !c.usage, c.usage)
				}
				if m != nil {
					t.Errorf("a model (%T) beside the error", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Info().Provider; got != c.provider {
				t.Errorf("provider %q; want %q", got, c.provider)
			}
		})
	}
	if _, err := (Model{}).Open(env(nil)); !errors.Is(err, llm.ErrNoCredentials) {
		t.Errorf("nothing configured: %v; want llm.ErrNoCredentials", err)
	}
}

func TestBudgetFlags(t *testing.T) {
	var b Budget
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	f.SetOutput(new(bytes.Buffer))
	b.Add(f)
	if err := f.Parse([]string{"--max-budget-usd", "2.50", "--max-tokens", "1000"}); err != nil {
		t.Fatal(err)
	}
	if b.Limits() != (budget.Limits{USD: 2.5, Tokens: 1000}) {
		t.Errorf("limits %+v", b.Limits())
	}
	for _, bad := range [][]string{{"--max-budget-usd", "-1"}, {"--max-budget-usd", "two"}, {"--max-tokens", "-5"}, {"--max-tokens", "1.5"}} {
		g := pflag.NewFlagSet("t", pflag.ContinueOnError)
		g.SetOutput(new(bytes.Buffer))
		var b2 Budget
		b2.Add(g)
		if err := g.Parse(bad); err == nil || !strings.Contains(err.Error(), bad[1]) {
			t.Errorf("%q: err = %v; want one quoting the value", bad, err)
		}
	}
}

func TestExit(t *testing.T) {
	var stderr bytes.Buffer
	other := errors.New("boom")
	if err := Exit(&stderr, other); err != other || stderr.Len() != 0 {
		t.Errorf("another error: %v, %q; want it unchanged and nothing said", err, stderr.String())
	}
	m := budget.NewMeter(budget.Config{Limits: budget.Limits{Tokens: 1}})
	over := m.Add("lead", "model", llm.Usage{InputTokens: 5})
	if !errors.Is(over, budget.ErrExceeded) {
		t.Fatalf("meter: %v", over)
	}
	err := Exit(&stderr, over)
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != ExitBudget || !strings.Contains(stderr.String(), "troupe: ") {
		t.Errorf("limit reached: %v, %q; want exit status %d and the reason on stderr", err, stderr.String(), ExitBudget)
	}
}

func TestPrices(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"modelPrices": {"my-model": {"input": 1, "output": 2}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Prices(home, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p["my-model"]; !ok {
		t.Errorf("the settings' price is missing: %v", p)
	}
	if len(p) <= 1 {
		t.Errorf("the built-in prices are gone: %v", p)
	}
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"modelPrices": {"my-model": {"input": -1}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Prices(home, cwd); err == nil || !strings.Contains(err.Error(), "modelPrices") {
		t.Errorf("a negative price: err = %v; want one naming modelPrices", err)
	}
}

// Every provider's default model, and every model the providers know,
// has a price in the one price list: --max-budget-usd stops a run on
// them. The defaults are read from the models the flags open.
func TestDefaultModelsPriced(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(script, []byte(`{"turns": [{"reply": {"text": "hi"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, m := range []Model{{Provider: "anthropic"}, {Provider: "scripted", Script: script}} {
		opened, err := m.Open(env(map[string]string{"ANTHROPIC_API_KEY": "k"}))
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, opened.Info().Model)
	}
	// OpenAI has no default model (--model is required): the ones it knows.
	models = append(append(models, anthropic.Models()...), openai.Models()...)
	prices := budget.DefaultPrices()
	for _, m := range models {
		if _, ok := prices.Lookup(m); !ok {
			t.Errorf("model %s has no price in budget.DefaultPrices", m)
		}
	}
	if !slices.Contains(models, anthropic.DefaultModel) {
		t.Errorf("the anthropic default %s was not checked: %q", anthropic.DefaultModel, models)
	}
}

// A USD limit on a model without a price is refused, naming the model
// and the setting that prices it; a priced model, or no USD limit, passes.
func TestCheckPriced(t *testing.T) {
	prices := budget.DefaultPrices()
	err := CheckPriced(prices, budget.Limits{USD: 1}, "my-model")
	var ue *cli.UsageError
	if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), `model "my-model" has no price`) || !strings.Contains(err.Error(), "modelPrices") {
		t.Errorf("unpriced model under --max-budget-usd: %v; want a usage error naming it and modelPrices", err)
	}
	for _, ok := range []struct {
		limits budget.Limits
		model  string
	}{{budget.Limits{USD: 1}, "claude-sonnet-5-5"}, {budget.Limits{Tokens: 10}, "my-model"}, {budget.Limits{}, "my-model"}} {
		if err := CheckPriced(prices, ok.limits, ok.model); err != nil {
			t.Errorf("%+v on %s: %v", ok.limits, ok.model, err)
		}
	}
}

func TestPermissionsApprover(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	var stderr bytes.Buffer
	a := cli.New(cli.Env{Stderr: &stderr, Getwd: func() (string, error) { return cwd, nil }, HomeDir: func() (string, error) { return home, nil }})
	a.HomeFlag = home
	if err := os.Mkdir(filepath.Join(cwd, "more"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := Permissions{Mode: "acceptEdits", Allowed: []string{"Bash(npm test), Edit"}, Disallowed: []string{"WebFetch"}, AddDirs: []string{"more"},
		Audit: filepath.Join(cwd, "audit.jsonl"), PromptCommand: "echo", PromptTimeout: time.Second}
	ap, closeAudit, err := p.Approver(a, cwd)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAudit()
	if ap.Mode != permission.ModeAcceptEdits || ap.Audit == nil || ap.Asker == nil {
		t.Errorf("approver %+v: want acceptEdits, an audit log and an asker", ap)
	}
	if len(ap.Dirs) != 1 || ap.Dirs[0] != filepath.Join(cwd, "more") {
		t.Errorf("dirs %q; want the --add-dir folder made absolute", ap.Dirs)
	}
	var allow, deny []string
	for _, r := range ap.Policy.Allow {
		if r.Source == CLIArgSource {
			allow = append(allow, r.String())
		}
	}
	for _, r := range ap.Policy.Deny {
		if r.Source == CLIArgSource {
			deny = append(deny, r.String())
		}
	}
	if strings.Join(allow, " ") != "Bash(npm test) Edit" || strings.Join(deny, " ") != "WebFetch" {
		t.Errorf("rules from the flags: allow %q, deny %q", allow, deny)
	}
	for _, c := range []struct {
		p    Permissions
		want string
	}{
		{Permissions{Mode: "yolo", PromptTimeout: time.Second}, "--permission-mode"},
		{Permissions{Allowed: []string{"Bash("}, PromptTimeout: time.Second}, "--allowedTools"},
		{Permissions{AddDirs: []string{"nowhere"}, PromptTimeout: time.Second}, "--add-dir nowhere: not a folder"},
		{Permissions{}, "--permission-prompt-timeout"},
	} {
		_, done, err := c.p.Approver(a, cwd)
		done()
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v; want a usage error naming %s", c.p, err, c.want)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"permissions": {"allow": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, done, err := (Permissions{PromptTimeout: time.Second}).Approver(a, cwd); err == nil || !strings.Contains(err.Error(), "permission settings") {
		t.Errorf("a torn settings file: err = %v; want one saying permission settings", err)
	} else {
		done()
	}
}

// Add puts the same flags on every command that runs an agent; without
// questions the prompt command's flags are left out.
func TestPermissionsAdd(t *testing.T) {
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var p Permissions
	p.Add(f, "with -p: ", true)
	if f.Lookup("permission-prompt-command") == nil || !strings.HasPrefix(f.Lookup("audit").Usage, "with -p: ") {
		t.Error("with questions: the prompt command's flag is missing, or the prefix")
	}
	g := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var q Permissions
	q.Add(g, "", false)
	if g.Lookup("permission-prompt-command") != nil || g.Lookup("permission-mode") == nil || q.PromptTimeout != DefaultPromptTimeout {
		t.Errorf("without questions: flags %v, timeout %s", g.Lookup("permission-prompt-command"), q.PromptTimeout)
	}
}
