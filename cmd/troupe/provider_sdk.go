package main

import "github.com/troupe-dev/troupe/llm"

// openSDKModel opens the providers built on official SDKs. It reports false
// for a provider it does not know.
func (a *app) openSDKModel(provider string, h *headless) (llm.Model, bool, error) {
	return nil, false, nil
}

func sdkCost(info llm.Info, u llm.Usage) (float64, bool) { return 0, false }
