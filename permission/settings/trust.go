package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/internal/fileedit"
	"github.com/troupe-dev/troupe/internal/realpath"
)

// Workspace trust: a folder's own files (.claude/ and .troupe/ settings,
// .mcp.json, agent definitions) come with the repository, so what in them
// can run a program or widen permissions is honoured only once the user
// trusted the folder (docs/permissions.md, "Trust"). The trust store is a
// file in troupe's home:
//
//	{"version": 1, "folders": {"/abs/dir": {"trustedAt": "...", "runs": ["hook ...", "MCP server ..."]}}}
//
// A trusted folder's subfolders are trusted too. Runs is what the folder
// could run when it was trusted (its hook commands and MCP servers): a
// folder whose list differs now is "changed" and is shown for approval
// again. The user's own settings file may also list folders under
// "trustedDirectories"; no project file can.

// TrustFileName is the trust store's file in troupe's home.
const TrustFileName = "trusted-folders.json"

// TrustKey is the user-settings key listing trusted folders.
const TrustKey = "trustedDirectories"

// trustVersion is the trust file's format.
const trustVersion = 1

// ErrNotTrusted is Revoke's error for a folder the store does not list.
var ErrNotTrusted = errors.New("the folder is not trusted")

// TrustEntry is one trusted folder.
type TrustEntry struct {
	Dir       string    `json:"-"`
	TrustedAt time.Time `json:"trustedAt"`
	// Runs is what the folder could run when it was trusted (Inspect).
	Runs []string `json:"runs"`
}

type trustDoc struct {
	Version int                   `json:"version"`
	Folders map[string]TrustEntry `json:"folders"`
}

// TrustStore is the trust store of one troupe home. It is safe for
// concurrent use, in this process and others: writes lock the file
// (<file>.lock) and replace it atomically.
type TrustStore struct {
	// Path is the trust file.
	Path string
	// UserSettings is the user's settings file, whose "trustedDirectories"
	// are trusted too; empty for none.
	UserSettings string
	// UserHome expands ~/ in trustedDirectories; empty leaves ~ unexpanded
	// (such an entry is then an error).
	UserHome string
	// ClaudeConfig is Claude Code's ~/.claude.json: a folder whose
	// "projects" entry has "hasTrustDialogAccepted": true (the same
	// person answered Claude Code's trust dialog for it, or for a parent)
	// is trusted too; empty for none. A file troupe cannot read is
	// Claude Code's own business and trusts nothing.
	ClaudeConfig string
	// Now stamps trust; nil means time.Now.
	Now func() time.Time
}

// Trust returns the trust store of the troupe home.
func Trust(home string) *TrustStore {
	user, _ := os.UserHomeDir()
	s := &TrustStore{Path: filepath.Join(home, TrustFileName), UserSettings: filepath.Join(home, "settings.json")}
	s.SetUserHome(user)
	return s
}

// SetUserHome sets UserHome and, from it, ClaudeConfig.
func (s *TrustStore) SetUserHome(user string) {
	s.UserHome, s.ClaudeConfig = user, ""
	if user != "" {
		s.ClaudeConfig = filepath.Join(user, ".claude.json")
	}
}

// Canonical returns dir absolute, clean and with its links resolved: the
// form the store keeps.
func Canonical(dir string) string { return realpath.Resolve(dir) }

// TrustStatus is what the store says of a folder.
type TrustStatus struct {
	Dir     string // the folder, canonical
	Trusted bool
	// Via is the trusted folder that covers Dir (Dir itself or a parent),
	// or the user settings file when its trustedDirectories does.
	Via string
	// Added and Removed are what Dir could run now and not when it was
	// trusted, and the other way round; only for a folder trusted itself
	// (not through a parent or the user's settings).
	Added, Removed []string
}

// Changed reports whether a trusted folder's hooks or MCP servers changed
// since it was trusted.
func (st TrustStatus) Changed() bool { return st.Trusted && len(st.Added)+len(st.Removed) > 0 }

// Load reads the store's folders, sorted by path; a missing file is an
// empty store, a malformed one an error naming the file and the problem.
func (s *TrustStore) Load() ([]TrustEntry, error) {
	doc, err := s.read()
	if err != nil {
		return nil, err
	}
	out := make([]TrustEntry, 0, len(doc.Folders))
	for dir, e := range doc.Folders {
		e.Dir = dir
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

func (s *TrustStore) read() (trustDoc, error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return trustDoc{Version: trustVersion, Folders: map[string]TrustEntry{}}, nil
	}
	if err != nil {
		return trustDoc{}, fmt.Errorf("read trust store: %w", err)
	}
	return parseTrust(s.Path, data)
}

// parseTrust parses a trust file's content; path names it in errors. A
// file of white space is an empty store.
func parseTrust(path string, data []byte) (trustDoc, error) {
	doc := trustDoc{Version: trustVersion, Folders: map[string]TrustEntry{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return doc, nil
	}
	if err := decode(data, &doc); err != nil {
		return trustDoc{}, fmt.Errorf("trust store: %w", positioned(path, data, err))
	}
	if doc.Version != trustVersion {
		return trustDoc{}, fmt.Errorf("trust store: %w", &FileError{Path: path, Key: "version", Err: fmt.Errorf("%d: want %d (a newer troupe wrote it?)", doc.Version, trustVersion)})
	}
	if doc.Folders == nil {
		doc.Folders = map[string]TrustEntry{}
	}
	for dir := range doc.Folders {
		if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
			return trustDoc{}, fmt.Errorf("trust store: %w", &FileError{Path: path, Key: "folders", Err: fmt.Errorf("%q: not an absolute, clean path", dir)})
		}
	}
	return doc, nil
}

// covers reports whether the trusted folder parent is dir or holds it,
// or holds the worktrees of its repository (package worktree puts them
// in <repo>-worktrees beside it: the same committed files).
func covers(parent, dir string) bool {
	if parent == dir {
		return true
	}
	sep := string(filepath.Separator)
	if !strings.HasSuffix(parent, sep) {
		return strings.HasPrefix(dir, parent+sep) || strings.HasPrefix(dir, parent+"-worktrees"+sep)
	}
	return strings.HasPrefix(dir, parent)
}

// Check says whether dir is trusted and, when the store trusts dir
// itself, what it runs now (runs, from Inspect) that it did not when
// trusted and the other way round. A malformed store or user settings
// file is an error.
func (s *TrustStore) Check(dir string, runs []string) (TrustStatus, error) {
	st := TrustStatus{Dir: Canonical(dir)}
	doc, err := s.read()
	if err != nil {
		return st, err
	}
	if e, ok := doc.Folders[st.Dir]; ok {
		st.Trusted, st.Via = true, st.Dir
		st.Added, st.Removed = diff(runs, e.Runs), diff(e.Runs, runs)
		return st, nil
	}
	var parents []string
	for d := range doc.Folders {
		if covers(d, st.Dir) {
			parents = append(parents, d)
		}
	}
	if len(parents) > 0 {
		slices.Sort(parents)
		st.Trusted, st.Via = true, parents[len(parents)-1] // the nearest
		return st, nil
	}
	dirs, err := s.settingDirs()
	if err != nil {
		return st, err
	}
	for _, d := range dirs {
		if covers(d, st.Dir) {
			st.Trusted, st.Via = true, s.UserSettings
			return st, nil
		}
	}
	for _, d := range s.claudeTrusted() {
		if covers(d, st.Dir) {
			st.Trusted, st.Via = true, s.ClaudeConfig
			return st, nil
		}
	}
	return st, nil
}

// claudeTrusted returns the folders Claude Code's configuration marks
// trusted.
func (s *TrustStore) claudeTrusted() []string {
	if s.ClaudeConfig == "" {
		return nil
	}
	data, err := os.ReadFile(s.ClaudeConfig)
	if err != nil {
		return nil
	}
	var cfg struct {
		Projects map[string]struct {
			Accepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return nil
	}
	var out []string
	for dir, p := range cfg.Projects {
		if p.Accepted && filepath.IsAbs(dir) {
			out = append(out, Canonical(dir))
		}
	}
	return out
}

// settingDirs returns the user settings' trustedDirectories, canonical.
func (s *TrustStore) settingDirs() ([]string, error) {
	if s.UserSettings == "" {
		return nil, nil
	}
	list, file, err := Key[[]string]([]File{{Path: s.UserSettings, Scope: ScopeUser}}, TrustKey)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, d := range list {
		abs, err := resolveDir(d, "", s.UserHome)
		if err != nil {
			return nil, &FileError{Path: file, Key: fmt.Sprintf("%s[%d]", TrustKey, i), Err: err}
		}
		out = append(out, Canonical(abs))
	}
	return out, nil
}

// Trusted reports whether the store trusts dir; an unreadable store
// trusts nothing.
func (s *TrustStore) Trusted(dir string) bool {
	st, err := s.Check(dir, nil)
	return err == nil && st.Trusted
}

// Trust records dir (canonical) as trusted with what it runs now, replacing
// an earlier record of it. A malformed store is an error and is left as
// it is.
func (s *TrustStore) Trust(ctx context.Context, dir string, runs []string) error {
	dir = Canonical(dir)
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return s.edit(ctx, func(doc *trustDoc) error {
		doc.Folders[dir] = TrustEntry{TrustedAt: now().UTC(), Runs: sorted(runs)}
		return nil
	})
}

// Revoke forgets dir (canonical). A folder the store does not list is
// ErrNotTrusted, with the parent that trusts it named when one does.
func (s *TrustStore) Revoke(ctx context.Context, dir string) error {
	dir = Canonical(dir)
	return s.edit(ctx, func(doc *trustDoc) error {
		if _, ok := doc.Folders[dir]; !ok {
			for d := range doc.Folders {
				if covers(d, dir) {
					return fmt.Errorf("revoke %s: %w itself: it is trusted through %s; revoke that folder", dir, ErrNotTrusted, d)
				}
			}
			return fmt.Errorf("revoke %s: %w", dir, ErrNotTrusted)
		}
		delete(doc.Folders, dir)
		return nil
	})
}

func (s *TrustStore) edit(ctx context.Context, change func(*trustDoc) error) error {
	return fileedit.Edit(ctx, s.Path, 0o600, func(data []byte) ([]byte, error) {
		doc, err := parseTrust(s.Path, data)
		if err != nil {
			return nil, fmt.Errorf("%w; fix or remove the file (troupe trust then records folders anew)", err)
		}
		if err := change(&doc); err != nil {
			return nil, err
		}
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	})
}

func sorted(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}

// diff returns the items of a not in b.
func diff(a, b []string) []string {
	var out []string
	for _, x := range sorted(a) {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
