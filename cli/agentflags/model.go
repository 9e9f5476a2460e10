// Package agentflags holds the flag groups of the commands that run an
// agent (troupe -p and the interactive lead, a pane teammate, troupe
// worker and troupe dream) and what each group opens: the model
// (--provider, --model, --script), the permission layer (settings files,
// --permission-mode, the allow and deny rules, --add-dir, the audit log
// and the prompt command) and the spending limits (--max-budget-usd,
// --max-tokens). Each command used to define and read its own copy.
package agentflags

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/anthropic"
	"github.com/troupe-dev/troupe/llm/endpoint"
	"github.com/troupe-dev/troupe/llm/openai"
	"github.com/troupe-dev/troupe/llm/scripted"
)

// Model is the model flags: which provider, which model, and the script
// of the scripted provider.
type Model struct {
	Provider string // anthropic, openai, scripted; "" picks by the environment
	Name     string // the model id; "" is the provider's default
	Script   string // the scripted provider's script file
}

// Add defines --provider, --model and --script on f.
func (m *Model) Add(f *pflag.FlagSet) {
	f.StringVar(&m.Provider, "provider", "", "model provider: anthropic, openai or scripted (default: anthropic if ANTHROPIC_API_KEY is set, else openai if OPENAI_API_KEY or OPENAI_BASE_URL is set)")
	f.StringVar(&m.Name, "model", "", "model id (default: the provider's)")
	f.StringVar(&m.Script, "script", "", "with --provider scripted: the script `FILE` (format: docs/scripted.md)")
}

// Open returns the model the flags and the environment (getenv) name.
func (m Model) Open(getenv func(string) string) (llm.Model, error) {
	provider := m.Provider
	if provider == "" {
		switch {
		case m.Script != "":
			provider = "scripted"
		case getenv("ANTHROPIC_API_KEY") != "":
			provider = "anthropic"
		case getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "":
			provider = "openai"
		default:
			return nil, fmt.Errorf("no model configured: set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL) for Anthropic, or OPENAI_API_KEY and/or OPENAI_BASE_URL for an OpenAI-compatible server, or run offline with --provider scripted --script FILE: %w", llm.ErrNoCredentials)
		}
	}
	switch provider {
	case "scripted":
		if m.Script == "" {
			return nil, cli.Usagef("--provider scripted needs --script FILE (format: docs/scripted.md)")
		}
		s, err := scripted.Load(m.Script)
		if err != nil {
			return nil, fmt.Errorf("--script: %w", err)
		}
		return scripted.New(s), nil
	case "anthropic":
		am, err := anthropic.New(anthropic.Options{
			APIKey:  getenv("ANTHROPIC_API_KEY"),
			BaseURL: getenv("ANTHROPIC_BASE_URL"),
			Model:   m.Name,
		})
		if err != nil {
			return nil, err
		}
		return am, nil
	case "openai":
		om, err := openai.New(openai.Options{
			APIKey:  getenv("OPENAI_API_KEY"),
			BaseURL: getenv("OPENAI_BASE_URL"),
			Model:   m.Name,
			// A model without vision: pictures go as a line of text (docs/images.md).
			TextOnly: getenv("TROUPE_OPENAI_TEXT_ONLY") != "",
		})
		if errors.Is(err, llm.ErrNoModel) {
			ep, _ := endpoint.Of("openai", getenv)
			return nil, fmt.Errorf("no model name for %s: give one with --model NAME (the name that server serves; on the OpenAI API, e.g. gpt-4.1): %w", ep.Name(), llm.ErrNoModel)
		}
		if err != nil {
			return nil, err
		}
		return om, nil
	}
	return nil, cli.Usagef("--provider %q: want anthropic, openai or scripted", provider)
}
