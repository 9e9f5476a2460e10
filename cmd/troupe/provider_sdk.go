package main

import (
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/anthropic"
	"github.com/troupe-dev/troupe/llm/endpoint"
	"github.com/troupe-dev/troupe/llm/openai"
)

// openSDKModel opens the providers built on official SDKs, with their
// settings from the environment. It reports false for a provider it does
// not know.
func (a *app) openSDKModel(provider string, h *headless) (llm.Model, bool, error) {
	switch provider {
	case "anthropic":
		m, err := anthropic.New(anthropic.Options{
			APIKey:  a.Getenv("ANTHROPIC_API_KEY"),
			BaseURL: a.Getenv("ANTHROPIC_BASE_URL"),
			Model:   h.model,
		})
		return m, true, err
	case "openai":
		m, err := openai.New(openai.Options{
			APIKey:  a.Getenv("OPENAI_API_KEY"),
			BaseURL: a.Getenv("OPENAI_BASE_URL"),
			Model:   h.model,
			// A model without vision: pictures go as a line of text (docs/images.md).
			TextOnly: a.Getenv("TROUPE_OPENAI_TEXT_ONLY") != "",
		})
		if errors.Is(err, llm.ErrNoModel) {
			ep, _ := endpoint.Of("openai", a.Getenv)
			err = fmt.Errorf("no model name for %s: give one with --model NAME (the name that server serves; on the OpenAI API, e.g. gpt-4.1): %w", ep.Name(), llm.ErrNoModel)
		}
		return m, true, err
	}
	return nil, false, nil
}

// sdkCost prices usage for the providers that publish prices.
func sdkCost(info llm.Info, u llm.Usage) (float64, bool) {
	if info.Provider == "anthropic" {
		return anthropic.Cost(info.Model, u)
	}
	return 0, false
}
