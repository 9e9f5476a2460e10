package main

import (
	"fmt"

	"github.com/troupe-dev/troupe/cli"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
)

// openModel returns the model named by the flags and the environment.
func (a *app) openModel(h *headless) (llm.Model, error) {
	provider := h.provider
	if provider == "" {
		switch {
		case h.script != "":
			provider = "scripted"
		case a.Getenv("ANTHROPIC_API_KEY") != "":
			provider = "anthropic"
		case a.Getenv("OPENAI_API_KEY") != "" || a.Getenv("OPENAI_BASE_URL") != "":
			provider = "openai"
		default:
			return nil, fmt.Errorf("no model configured: set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL) for Anthropic, or OPENAI_API_KEY and/or OPENAI_BASE_URL for an OpenAI-compatible server, or run offline with --provider scripted --script FILE: %w", llm.ErrNoCredentials)
		}
	}
	switch provider {
	case "scripted":
		if h.script == "" {
			return nil, cli.Usagef("--provider scripted needs --script FILE (format: docs/scripted.md)")
		}
		s, err := scripted.Load(h.script)
		if err != nil {
			return nil, fmt.Errorf("--script: %w", err)
		}
		return scripted.New(s), nil
	}
	if m, ok, err := a.openSDKModel(provider, h); ok {
		return m, err
	}
	return nil, cli.Usagef("--provider %q: want anthropic, openai or scripted", provider)
}

// cost returns the price of usage when the provider knows it.
func cost(info llm.Info, u llm.Usage) (float64, bool) {
	return sdkCost(info, u)
}
