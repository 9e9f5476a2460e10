package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/internal/jsonx"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:7420", "", true},
		{"[::1]:7420", "", true},
		{"localhost:7420", "", true},
		{"0.0.0.0:7420", "", false},
		{":7420", "", false},
		{"192.168.1.5:7420", "", false},
		{"example.com:7420", "", false},
		{"0.0.0.0:7420", "s3cret-s3cret-s3cret", true},
		{"0.0.0.0:7420", "s3cret", false},                // too short to guard a port anyone can try
		{"127.0.0.1:7420", "1", false},                   // a short token is refused anywhere
		{"0.0.0.0:7420", "                    x", false}, // white space is not strength
		{"no-port", "", false},
	}
	for _, tt := range tests {
		err := dashboard.CheckListen(tt.addr, tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("CheckListen(%q, %q) = %v; want ok=%v", tt.addr, tt.token, err, tt.ok)
		}
		if err != nil && tt.ok == false && tt.addr != "no-port" && !strings.Contains(err.Error(), "--token") {
			t.Errorf("CheckListen(%q) error %q does not say to give --token", tt.addr, err)
		}
	}
}

func TestToken(t *testing.T) {
	f := newFixture(t, dashboard.Config{Token: "s3cret"})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, hdr ...string) *http.Response {
		req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for _, path := range []string{"/", "/team/alpha", "/team/alpha/events", "/?token=wrong"} {
		if res := get(path); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %s; want 401", path, res.Status)
		}
	}
	if res := get("/team/alpha/events", "Authorization", "Bearer wrong"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("events with a wrong bearer token: %s; want 401", res.Status)
	}
	if res := get("/", "Authorization", "Bearer s3cret"); res.StatusCode != http.StatusOK {
		t.Errorf("GET / with the bearer token: %s; want 200", res.Status)
	}
	res := get("/team/alpha?token=s3cret")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/team/alpha" {
		t.Fatalf("GET with ?token: %s to %q; want 303 to /team/alpha", res.Status, res.Header.Get("Location"))
	}
	var cookie string
	for _, c := range res.Cookies() {
		if c.HttpOnly && c.SameSite == http.SameSiteStrictMode {
			cookie = c.Name + "=" + c.Value
		}
	}
	if cookie == "" {
		t.Fatalf("no HttpOnly SameSite=Strict cookie set: %v", res.Header["Set-Cookie"])
	}
	if res := get("/team/alpha", "Cookie", cookie); res.StatusCode != http.StatusOK {
		t.Errorf("GET with the cookie: %s; want 200", res.Status)
	}
}

// TestLoopbackHost refuses a non-loopback Host header when there is no
// token (DNS rebinding), and control requests from other origins.
func TestLoopbackHost(t *testing.T) {
	f := newFixture(t, dashboard.Config{Control: true})
	req, _ := http.NewRequest("GET", f.srv.URL+"/", nil)
	req.Host = "attacker.example:7420"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("Host attacker.example: %s; want 403", res.Status)
	}
	post := func(body, ctype, origin string) int {
		req, _ := http.NewRequest("POST", f.srv.URL+"/team/alpha/send", strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		if origin != "" {
			req.Header.Set("Origin", origin)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := post(`{"to":"bob","text":"hi"}`, "application/json", "https://evil.example"); c != http.StatusForbidden {
		t.Errorf("cross-site control request: %d; want 403", c)
	}
	if c := post(`to=bob&text=hi`, "application/x-www-form-urlencoded", ""); c != http.StatusUnsupportedMediaType {
		t.Errorf("form-encoded control request: %d; want 415", c)
	}
	if c := post(`{"to":"nobody","text":"hi"}`, "application/json", ""); c != http.StatusNotFound {
		t.Errorf("send to an unknown member: %d; want 404", c)
	}
	if c := post(`{"to":"bob","text":"  "}`, "application/json", ""); c != http.StatusBadRequest {
		t.Errorf("empty message: %d; want 400", c)
	}
	inbox, _ := f.other.Mail().Read(t.Context(), "alpha", "bob", false)
	if len(inbox) != 0 {
		t.Errorf("refused requests stored %d messages", len(inbox))
	}
}

// TestReadOnly: without Control the write endpoints do not exist.
func TestReadOnly(t *testing.T) {
	f := newFixture(t, dashboard.Config{})
	res, err := http.Post(f.srv.URL+"/team/alpha/send", "application/json", strings.NewReader(`{"to":"bob","text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusOK {
		t.Errorf("send on a read-only dashboard: %s; want a refusal", res.Status)
	}
}

// TestEventStream reads the SSE stream over plain HTTP: the current state
// first, then a new event soon after a message lands.
func TestEventStream(t *testing.T) {
	f := newFixture(t, dashboard.Config{})
	next := stream(t, f.srv.URL+"/team/alpha/events")
	if first := next(); !strings.Contains(first, `data-name="alice"`) {
		t.Fatalf("first event lacks the roster:\n%s", first)
	}
	start := time.Now()
	if _, err := f.other.Mail().Send(t.Context(), "alpha", "bob", mailbox.Message{From: "alice", Text: "ping <b>"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); !strings.Contains(ev, "ping &lt;b&gt;") {
		t.Fatalf("event after the send lacks the escaped message:\n%s", ev)
	}
	t.Logf("event %v after the send", time.Since(start))
}

func TestUnknownTeam(t *testing.T) {
	f := newFixture(t, dashboard.Config{})
	for _, p := range []string{"/team/nope", "/team/nope/events"} {
		res, err := http.Get(f.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s; want 404", p, res.Status)
		}
	}
}

// TestDeadMember: a teammate the lead marked dead shows as dead.
func TestDeadMember(t *testing.T) {
	f := newFixture(t, dashboard.Config{})
	if _, err := team.UpdateMember(t.Context(), f.other.Teams(), "alpha", "bob", func(m *team.Member) error {
		if m.Extra == nil {
			m.Extra = jsonx.Extra{}
		}
		m.Extra[swarm.StatusKey] = json.RawMessage(`"` + swarm.StatusDead + `"`)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(f.srv.URL + "/team/alpha")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(b), `<td class="state dead">dead</td>`) {
		t.Errorf("bob is not shown dead:\n%s", b)
	}
}

// stream opens an event stream for at most 10 s and returns a function
// that reads the next event's data.
func stream(t *testing.T, url string) func() string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	return func() string {
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if line == "" && data != nil {
				return strings.Join(data, "\n")
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = append(data, d)
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return ""
	}
}

// The team page shows what the session and each member spent, from the
// lead session's records.
func TestSpending(t *testing.T) {
	var asked []string
	f := newFixture(t, dashboard.Config{Spending: func(session string) (map[string]dashboard.Spend, bool) {
		asked = append(asked, session)
		return map[string]dashboard.Spend{"lead": {Tokens: 1200, USD: 0.01, Priced: true}, "alice": {Tokens: 34567, USD: 0.1234, Priced: true}}, true
	}})
	if _, err := f.other.Teams().Update(t.Context(), "alpha", func(c *team.Config) error { c.LeadSessionID = "s-42"; return nil }); err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(f.srv.URL + "/team/alpha")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, want := range []string{`Spent by the session: <span class="spent">35,767 tokens · $0.1334</span>`, `<td class="spent">34,567 tokens · $0.1234</td>`, `<td class="spent">1,200 tokens · $0.0100</td>`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page lacks %s:\n%s", want, b)
		}
	}
	if len(asked) == 0 || asked[0] != "s-42" {
		t.Errorf("Spending asked for %v; want the lead's session s-42", asked)
	}
}

// A member's page shows its transcript in the lead's session, escaped;
// the team page links to it; an unknown member is a 404.
func TestMemberTranscript(t *testing.T) {
	var asked []string
	f := newFixture(t, dashboard.Config{Transcript: func(session, agent string) (string, bool) {
		asked = append(asked, session+"/"+agent)
		if agent == "bob" {
			return "", false
		}
		return "12:00:00 user: build it\n12:00:01 assistant: <script>window.x=1</script>\x1b[31mred\n", true
	}})
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if _, body := get("/team/alpha/member/alice"); !strings.Contains(body, "The team file names no lead session") {
		t.Errorf("without a lead session: %s", body)
	}
	if _, err := f.other.Teams().Update(t.Context(), "alpha", func(c *team.Config) error { c.LeadSessionID = "s-7"; return nil }); err != nil {
		t.Fatal(err)
	}
	code, body := get("/team/alpha/member/alice")
	if code != http.StatusOK || !strings.Contains(body, "12:00:00 user: build it") || !strings.Contains(body, "&lt;script&gt;window.x=1&lt;/script&gt;") || strings.Contains(body, "<script>window") || strings.Contains(body, "\x1b") {
		t.Errorf("alice's page (%d) does not show her transcript escaped:\n%s", code, body)
	}
	if _, body := get("/team/alpha/member/bob"); !strings.Contains(body, "No transcript of bob is reachable from here") {
		t.Errorf("bob's page: %s", body)
	}
	get("/team/alpha/member/team-lead")
	if code, _ := get("/team/alpha/member/zed"); code != http.StatusNotFound {
		t.Errorf("an unknown member: status %d; want 404", code)
	}
	if _, body := get("/team/alpha"); !strings.Contains(body, `<a href="/team/alpha/member/alice">alice</a>`) {
		t.Errorf("the team page does not link alice's page:\n%s", body)
	}
	if want := []string{"s-7/alice", "s-7/bob", "s-7/lead"}; strings.Join(asked, " ") != strings.Join(want, " ") {
		t.Errorf("Transcript asked for %v; want %v", asked, want)
	}
}
