package kit

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/webtool"
)

// hostNamer is the part of a permission layer WebFetch consults before
// it connects to a loopback, private or link-local address
// (approve.Approver and swarm.Approver have it).
type hostNamer interface {
	NamesHost(host string) bool
}

// webTools returns WebFetch, which answers on the session's small model
// (smallModelName) or else on the agent's own, and WebSearch where there
// is a search: the settings' webSearch.url (a SearXNG-style JSON endpoint) when set, else
// the provider's own web search on Anthropic; on other providers without
// the setting, WebSearch is not offered (docs/web.md).
func webTools(o ToolOptions) []tool.Tool {
	if o.Model == nil {
		return nil
	}
	fc := webtool.FetchConfig{Model: o.Model, ModelName: o.ModelName}
	if o.Context != nil && o.Context.smallModel != "" {
		fc.ModelName = o.Context.smallModel
	}
	if n, ok := o.Approver.(hostNamer); ok {
		fc.Allows = n.NamesHost
	}
	out := []tool.Tool{webtool.NewFetch(fc)}
	switch {
	case o.Context != nil && o.Context.webSearch != "":
		out = append(out, webtool.NewSearch(webtool.SearXNG{URL: o.Context.webSearch}))
	case o.Model.Info().Provider == "anthropic":
		out = append(out, webtool.NewSearch(webtool.ModelSearch{Model: o.Model, ModelName: o.ModelName}))
	}
	return out
}

// webSearchSetting is the settings' "webSearch" key.
type webSearchSetting struct {
	URL string `json:"url"`
}

// searchURL returns the webSearch.url of the settings of troupeHome and
// cwd, the last file that sets it winning. A project's own files count
// only once the folder is trusted: an untrusted folder could otherwise
// send every query to a server of its choosing. A bad value is warned
// about and ignored.
func searchURL(troupeHome, cwd string, warn func(string)) string {
	var files []settings.File
	for _, f := range settings.Files(troupeHome, cwd) {
		if f.Untrusted {
			continue
		}
		files = append(files, f)
	}
	v, file, err := settings.Key[webSearchSetting](files, "webSearch")
	if err != nil {
		warn(err.Error())
		return ""
	}
	if v.URL == "" {
		return ""
	}
	if u, err := url.Parse(v.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		warn(fmt.Sprintf("%s: webSearch.url %q: want an http:// or https:// URL; WebSearch uses the provider's search or is not offered", file, v.URL))
		return ""
	}
	return v.URL
}

// smallModelName returns the small/fast model WebFetch answers on, the
// provider being the session's: the environment's
// ANTHROPIC_SMALL_FAST_MODEL when set, else the settings' smallModel of
// troupeHome and cwd (the last file that sets it winning; an untrusted
// folder's own files are not read, so a cloned project cannot choose
// where its pages' questions are billed). "" means the agent's own model
// (docs/web.md). A value of the wrong type is warned about and ignored.
func smallModelName(troupeHome, cwd string, getenv func(string) string, warn func(string)) string {
	if m := strings.TrimSpace(getenv("ANTHROPIC_SMALL_FAST_MODEL")); m != "" {
		return m
	}
	var files []settings.File
	for _, f := range settings.Files(troupeHome, cwd) {
		if !f.Untrusted {
			files = append(files, f)
		}
	}
	v, _, err := settings.Key[string](files, "smallModel")
	if err != nil {
		warn(err.Error())
		return ""
	}
	return strings.TrimSpace(v)
}
