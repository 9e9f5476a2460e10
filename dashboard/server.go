package dashboard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

//go:embed assets
var assets embed.FS

// DefaultAddr is where troupe dashboard listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7420"

// DefaultHeartbeat is how often an idle event stream gets a comment line,
// so that a dead connection is noticed.
const DefaultHeartbeat = 15 * time.Second

// DefaultWriteTimeout is Config.WriteTimeout's default.
const DefaultWriteTimeout = 10 * time.Second

// tokenCookie carries the access token after the first visit with ?token=.
const tokenCookie = "troupe_dashboard"

// Config is what a Server reads and how it behaves.
type Config struct {
	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store
	// Control enables the actions that write to the stores: sending a
	// message, asking a teammate to shut down, answering a permission
	// request. Off, the dashboard only reads.
	Control bool
	// Token, when set, is required on every request: as a bearer token,
	// as the cookie set by a first visit with ?token=, or as that query.
	Token string
	// Spending, when set, returns what each agent of a lead's session has
	// spent, from the session's records (spend.go); ok is false when they
	// cannot be read from here (another machine's session).
	Spending func(session string) (map[string]Spend, bool)
	// Transcript, when set, returns agent's transcript in a lead's
	// session as text for a person ("lead" is the lead's); ok is false
	// when it cannot be read from here. The member pages show it.
	Transcript func(session, agent string) (text string, ok bool)
	// Workflows, when set, returns the workflow runs of a lead's session,
	// newest first, with their phases and agents (workflows.go); ok is
	// false when they cannot be read from here. The team page shows them.
	Workflows func(session string) (runs []WorkflowRun, ok bool)
	// WatchWorkflows, when set with Workflows, kicks the returned channel
	// when a workflow run of session changed, so that a team page's event
	// stream shows the change; the channel is closed when ctx ends.
	WatchWorkflows func(ctx context.Context, session string) (<-chan struct{}, error)
	// Heartbeat is the idle interval of event streams; DefaultHeartbeat if 0.
	Heartbeat time.Duration
	// WriteTimeout bounds one write to an event stream's client: one that
	// stops reading is let go, with the watches its stream holds.
	// DefaultWriteTimeout if 0.
	WriteTimeout time.Duration
	Now          func() time.Time
	Log          *slog.Logger
}

// Server is the dashboard's HTTP handler.
type Server struct {
	cfg   Config
	pages *template.Template
	mux   *http.ServeMux

	// answering is held while a permission request is looked up and
	// answered, so that two tabs cannot both answer one request.
	answering sync.Mutex
}

// New returns a Server over the stores in cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Teams == nil || cfg.Mail == nil || cfg.Tasks == nil {
		return nil, errors.New("dashboard: the team, mailbox and task stores are all required")
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	pages, err := template.New("").Funcs(template.FuncMap{"join": strings.Join}).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: parse templates: %w", err)
	}
	s := &Server{cfg: cfg, pages: pages, mux: http.NewServeMux()}
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.teams)
	s.mux.HandleFunc("GET /team/{team}", s.team)
	s.mux.HandleFunc("GET /team/{team}/events", s.events)
	s.mux.HandleFunc("GET /team/{team}/member/{name}", s.member)
	s.mux.HandleFunc("GET /team/{team}/workflow/{run}/agent/{index}", s.workflowAgent) // workflows.go
	if cfg.Control {
		s.mux.HandleFunc("POST /team/{team}/send", s.send)
		s.mux.HandleFunc("POST /team/{team}/stop", s.stop)
		s.mux.HandleFunc("POST /team/{team}/permission", s.permission)
		s.mux.HandleFunc("POST /team/{team}/answer", s.answer)
	}
	return s, nil
}

// ServeHTTP checks the token, then serves the request. Writes are refused
// from other origins (http.CrossOriginProtection).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if err := http.NewCrossOriginProtection().Check(r); err != nil {
		http.Error(w, "dashboard: cross-origin request refused", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized reports whether r may proceed, answering it otherwise. With
// no token only loopback Host names are accepted, so a web page elsewhere
// cannot reach the dashboard through DNS rebinding.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Token == "" {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if !loopbackName(host) {
			http.Error(w, fmt.Sprintf("dashboard: host %q is not a loopback name; this dashboard has no token and answers only on this machine", r.Host), http.StatusForbidden)
			return false
		}
		return true
	}
	if q := r.URL.Query().Get("token"); q != "" && s.tokenOK(q) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		u := *r.URL
		qs := u.Query()
		qs.Del("token")
		u.RawQuery = qs.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenOK(b) {
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && s.tokenOK(c.Value) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="troupe dashboard"`)
	http.Error(w, "dashboard: missing or wrong token: open the address with ?token=TOKEN as printed by troupe dashboard", http.StatusUnauthorized)
	return false
}

// tokenOK compares in constant time; hashing first hides the length too.
func (s *Server) tokenOK(got string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.cfg.Token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// MinTokenLen is the shortest token CheckListen accepts: a token guards
// the team against anyone who can reach the port, and is tried at will.
const MinTokenLen = 16

// CheckListen refuses to listen beyond loopback without a token (addr's
// host must be a loopback address or "localhost" unless token is set),
// and a token shorter than MinTokenLen anywhere.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("dashboard address %q: %w (want host:port, such as %s)", addr, err, DefaultAddr)
	}
	if token != "" && len(strings.TrimSpace(token)) < MinTokenLen {
		return fmt.Errorf("dashboard token of %d characters: use at least %d (--token or $TROUPE_DASHBOARD_TOKEN; on loopback give none, and troupe dashboard makes one)", len(strings.TrimSpace(token)), MinTokenLen)
	}
	if token == "" && !loopbackName(host) {
		where := host
		if where == "" {
			where = "every interface"
		}
		return fmt.Errorf("dashboard address %q listens on %s, beyond this machine: give --token (or $TROUPE_DASHBOARD_TOKEN) so that only holders of the token can see and steer the team, or listen on 127.0.0.1", addr, where)
	}
	return nil
}

// loopbackName reports whether host names this machine only.
func loopbackName(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
