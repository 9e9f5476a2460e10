// Package webtool provides the WebFetch and WebSearch tools, as Claude
// Code has them (docs/web.md).
//
// WebFetch GETs one http(s) URL through a client that resolves every
// host itself and refuses, at connect time, loopback, private, link-local,
// unspecified and multicast addresses unless an allow rule names the host
// (WebFetch(domain:HOST)): redirects and DNS rebinding cannot reach the
// private network behind the rule's back. It follows at most ten
// redirects on the same host, hands a redirect to another host back to
// the model, caps the body and the time, turns HTML into Markdown and
// asks FetchConfig's model (the session's small model, session/kit/web.go)
// one question about the page: only the answer enters the conversation.
// Pages are cached for 15 minutes.
//
// WebSearch runs a Searcher: the provider's server-side web search
// (Anthropic's web_search tool) or a SearXNG-style JSON endpoint from
// the settings, and answers with the hits' titles and URLs.
//
// The tools are safe for concurrent use.
package webtool
