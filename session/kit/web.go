package kit

import (
	"fmt"
	"net/url"

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

// webTools returns WebFetch, and WebSearch where there is a search: the
// settings' webSearch.url (a SearXNG-style JSON endpoint) when set, else
// the provider's own web search on Anthropic; on other providers without
// the setting, WebSearch is not offered (docs/web.md).
func webTools(o ToolOptions) []tool.Tool {
	if o.Model == nil {
		return nil
	}
	fc := webtool.FetchConfig{Model: o.Model, ModelName: o.ModelName}
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
