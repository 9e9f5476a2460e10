package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Peer write paths (docs/benchmarks.md, "The peer's scenarios": PEER_MODE).
const (
	PeerLegacy  = "legacy"  // 2.1.110: the inbox rewritten in place
	PeerCurrent = "current" // 2.1.3xx: temp file renamed over the inbox
)

// ErrNoNode reports that node or npm could not be run; scenarios that need
// them are skipped.
var ErrNoNode = errors.New("bench: node or npm unavailable")

// PeerConfig says where the peer's replica comes from.
type PeerConfig struct {
	// Source is the peer-bench folder (its scripts are copied, never run
	// in place).
	Source string
	// NodeModules, if set, is an installed node_modules folder (with
	// proper-lockfile 4.1.2) linked into the copy instead of running npm
	// install.
	NodeModules string
}

// Peer is a runnable copy of the peer's Node replica.
type Peer struct {
	Dir         string // the copy, with node_modules
	NodeVersion string
	remove      func()
}

// Close removes the copy.
func (p *Peer) Close() error {
	if p != nil && p.remove != nil {
		p.remove()
	}
	return nil
}

// PreparePeer copies the peer's scripts into a temporary folder and
// installs their dependencies. Its error matches ErrNoNode when node or
// npm cannot be run.
func (r *Runner) PreparePeer(ctx context.Context, c PeerConfig) (*Peer, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if err := r.fileOnly(); err != nil {
		return nil, err
	}
	version, err := r.output(ctx, Spec{Path: "node", Args: []string{"--version"}})
	if err != nil {
		return nil, fmt.Errorf("%w: node --version: %v", ErrNoNode, err)
	}
	if _, err := os.Stat(filepath.Join(c.Source, "inbox-writer.js")); err != nil {
		return nil, fmt.Errorf("peer-bench folder %q: %w", c.Source, err)
	}
	dir, remove, err := r.runDir("peer")
	if err != nil {
		return nil, err
	}
	p := &Peer{Dir: dir, NodeVersion: strings.TrimSpace(version), remove: remove}
	if err := copyScripts(c.Source, dir); err != nil {
		p.Close()
		return nil, err
	}
	if c.NodeModules != "" {
		abs, err := filepath.Abs(c.NodeModules)
		if err == nil {
			err = os.Symlink(abs, filepath.Join(dir, "node_modules"))
		}
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("link node_modules: %w", err)
		}
		return p, nil
	}
	r.progressf("peer: npm install in %s", dir)
	if out, err := r.output(ctx, Spec{Path: "npm", Args: []string{"install", "--no-audit", "--no-fund", "--loglevel=error"}, Dir: dir}); err != nil {
		p.Close()
		return nil, fmt.Errorf("%w: npm install: %v: %s", ErrNoNode, err, lastLines(out, 5))
	}
	return p, nil
}

// copyScripts copies the regular files of src (scripts, package.json) to dst.
func copyScripts(src, dst string) error {
	des, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("copy peer-bench: %w", err)
	}
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, de.Name()), data, 0o644)
		}
		if err != nil {
			return fmt.Errorf("copy peer-bench: %w", err)
		}
	}
	return nil
}

// output runs s to completion and returns its combined output.
func (r *Runner) output(ctx context.Context, s Spec) (string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", err
	}
	s.Stdout, s.Stderr = pw, pw
	proc, err := r.Start(ctx, s)
	pw.Close()
	if err != nil {
		pr.Close()
		return "", err
	}
	out, _ := io.ReadAll(pr)
	pr.Close()
	_, err = proc.Wait()
	return string(out), err
}

// InteropConfig is scenario B8: Troupe troupe writer processes and Node
// processes of the peer's replica (inbox-writer.js, in Mode) send Msgs
// messages each into one inbox, together.
type InteropConfig struct {
	Troupe int
	Node   int
	Msgs   int
	// Text is the length of each message's text; zero means DefaultText.
	Text int
	// Mode is PeerLegacy or PeerCurrent.
	Mode string
}

// SideResult is what one side of an Interop run achieved.
type SideResult struct {
	Attempted int `json:"attempted"`
	OK        int `json:"ok"`
	Failed    int `json:"failed"`
	// Failures counts failed sends by kind; for Node, its error code
	// (ELOCKED: the lock was not taken within the retry budget).
	Failures map[string]int `json:"failures,omitempty"`
	// WallS runs from the barrier to this side's last return.
	WallS   float64 `json:"wall_s"`
	OKPerS  float64 `json:"ok_per_s"`
	Latency Summary `json:"latency"`
}

// InteropResult is the outcome of an Interop run.
type InteropResult struct {
	Mode   string     `json:"mode"`
	Troupe int        `json:"troupe_writers"`
	Node   int        `json:"node_writers"`
	Msgs   int        `json:"msgs"`
	TSide  SideResult `json:"troupe"`
	NSide  SideResult `json:"node"`
	// NodeReadErrors counts unparseable inboxes the Node writers read
	// (each one would make them overwrite the inbox).
	NodeReadErrors int     `json:"node_read_errors"`
	FinalBytes     int64   `json:"final_bytes"`
	InvalidInbox   string  `json:"invalid_inbox,omitempty"`
	Verify         Tally   `json:"verify"`
	Skipped        string  `json:"skipped,omitempty"`
	NodeVersion    string  `json:"node_version,omitempty"`
	WallS          float64 `json:"wall_s"`
}

// nodeResult is the message inbox-writer.js sends when it is done.
type nodeResult struct {
	Wid  string    `json:"wid"`
	Lat  []float64 `json:"lat"` // ms per write
	OK   []string  `json:"ok"`
	Fail []struct {
		ID  string  `json:"id"`
		Err string  `json:"err"`
		MS  float64 `json:"ms"`
	} `json:"fail"`
	ReadErrors int     `json:"readErrors"`
	Start      float64 `json:"start"` // ms since the epoch
	End        float64 `json:"end"`
}

// Interop runs scenario B8 with the prepared peer p.
func (r *Runner) Interop(ctx context.Context, p *Peer, c InteropConfig) (InteropResult, error) {
	if err := r.check(); err != nil {
		return InteropResult{}, err
	}
	if err := r.fileOnly(); err != nil {
		return InteropResult{}, err
	}
	if c.Troupe < 0 || c.Node < 0 || c.Troupe+c.Node < 1 || c.Msgs < 1 {
		return InteropResult{}, fmt.Errorf("bench: interop of %d troupe and %d node writers × %d: want writers and messages", c.Troupe, c.Node, c.Msgs)
	}
	if c.Mode != PeerLegacy && c.Mode != PeerCurrent {
		return InteropResult{}, fmt.Errorf("bench: peer mode %q: want %s or %s", c.Mode, PeerLegacy, PeerCurrent)
	}
	if c.Text <= 0 {
		c.Text = DefaultText
	}
	label := fmt.Sprintf("interop %s: %d troupe + %d node writers × %d", c.Mode, c.Troupe, c.Node, c.Msgs)
	dir, cleanup, err := r.runDir("interop")
	if err != nil {
		return InteropResult{}, err
	}
	defer cleanup()
	run, err := r.newMailRun(ctx, dir, 0, false, c.Text)
	if err != nil {
		return InteropResult{}, err
	}
	defer run.close()
	r.progressf("%s: starting", label)
	g := r.newGroup()
	defer g.abort()
	for i := range c.Troupe {
		if _, err := g.spawnTroupe(ctx, fmt.Sprintf("troupe writer %d", i), run.at(childConfig{
			Role: roleSend, Team: benchTeam, To: benchInbox,
			From: fmt.Sprintf("t%d", i), N: c.Msgs, Text: c.Text,
		})); err != nil {
			return InteropResult{}, err
		}
	}
	for i := range c.Node {
		if _, err := g.spawnNode(ctx, fmt.Sprintf("node writer %d", i), Spec{
			Path: "node",
			Args: []string{filepath.Join(p.Dir, "inbox-writer.js"), run.inbox, fmt.Sprintf("n%d", i), strconv.Itoa(c.Msgs), strconv.Itoa(c.Text)},
			Env:  []string{"PEER_MODE=" + c.Mode},
		}); err != nil {
			return InteropResult{}, err
		}
	}
	if err := g.waitReady(ctx); err != nil {
		return InteropResult{}, err
	}
	start, err := g.release(g.kids)
	if err != nil {
		return InteropResult{}, err
	}
	res := InteropResult{Mode: c.Mode, Troupe: c.Troupe, Node: c.Node, Msgs: c.Msgs, NodeVersion: p.NodeVersion,
		TSide: SideResult{Failures: map[string]int{}}, NSide: SideResult{Failures: map[string]int{}}}
	sent := map[string]bool{}
	var tLat, nLat []float64
	tEnd, nEnd := start, start
	progress := func() {
		r.progressf("  %s: %d troupe sends returned, %d node writers done, after %.1f s", label, res.TSide.Attempted, len(nLat), time.Since(time.Unix(0, start)).Seconds())
	}
	err = g.collect(ctx, progress, func(ev event) error {
		if ev.raw != nil {
			var nr nodeResult
			if err := json.Unmarshal(ev.raw, &nr); err != nil {
				return fmt.Errorf("%s: result: %w", ev.from.name, err)
			}
			nLat = append(nLat, nr.Lat...)
			nEnd = max(nEnd, int64(nr.End*1e6))
			res.NodeReadErrors += nr.ReadErrors
			for _, id := range nr.OK {
				sent[id] = true
			}
			for _, f := range nr.Fail {
				sent[f.ID] = false
				res.NSide.Failures[f.Err]++
			}
			res.NSide.OK += len(nr.OK)
			res.NSide.Failed += len(nr.Fail)
			return nil
		}
		rec := ev.rec
		if rec.Kind != kindOp {
			return nil
		}
		res.TSide.Attempted++
		tLat = append(tLat, spanMS(rec.Start, rec.End))
		tEnd = max(tEnd, rec.End)
		ok := rec.Outcome == outOK
		sent[rec.ID] = ok
		if ok {
			res.TSide.OK++
		} else {
			res.TSide.Failed++
			res.TSide.Failures[rec.Outcome]++
		}
		return nil
	})
	if err != nil {
		return InteropResult{}, err
	}
	if err := g.finish(ctx); err != nil {
		return InteropResult{}, err
	}
	res.NSide.Attempted = res.NSide.OK + res.NSide.Failed
	res.TSide.Latency, res.NSide.Latency = Summarize(tLat), Summarize(nLat)
	side := func(s *SideResult, end int64) {
		s.WallS = float64(end-start) / 1e9
		if s.WallS > 0 {
			s.OKPerS = float64(s.OK) / s.WallS
		}
	}
	side(&res.TSide, tEnd)
	side(&res.NSide, nEnd)
	res.WallS = float64(max(tEnd, nEnd)-start) / 1e9
	f, err := ReadInbox(run.inbox)
	if err != nil {
		res.InvalidInbox = err.Error()
	}
	res.FinalBytes = f.Bytes
	res.Verify = Verify(sent, f.IDs)
	r.progressf("%s: troupe %d/%d ok (%.1f msg/s), node %d/%d ok (%.1f msg/s, failures %v); valid JSON %t, lost %d, duplicates %d, phantoms %d",
		label, res.TSide.OK, res.TSide.Attempted, res.TSide.OKPerS, res.NSide.OK, res.NSide.Attempted, res.NSide.OKPerS, res.NSide.Failures,
		res.InvalidInbox == "", res.Verify.Lost, res.Verify.Duplicates, res.Verify.Phantoms)
	return res, nil
}

// spawnNode starts a Node child with an IPC channel on fd 3, as
// child_process.fork does (JSON serialization): the child's process.send
// writes one JSON value per line, and its 'message' events read ours.
func (g *group) spawnNode(ctx context.Context, name string, spec Spec) (*child, error) {
	ours, theirs, err := ipcPair()
	if err != nil {
		return nil, err
	}
	logR, logW, err := os.Pipe()
	if err != nil {
		ours.Close()
		theirs.Close()
		return nil, err
	}
	spec.Env = append(append([]string(nil), spec.Env...), "NODE_CHANNEL_FD=3", "NODE_CHANNEL_SERIALIZATION_MODE=json")
	spec.ExtraFiles = []*os.File{theirs}
	spec.Stdout, spec.Stderr = logW, logW
	proc, err := g.r.Start(ctx, spec)
	theirs.Close()
	logW.Close()
	if err != nil {
		ours.Close()
		logR.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, index: len(g.kids), proc: proc, cmd: ours, node: true}
	g.kids = append(g.kids, c)
	g.read(c, ours, decodeNode)
	g.drain(c, logR)
	return c, nil
}

func decodeNode(line []byte) event {
	if strings.TrimSpace(string(line)) == `"ready"` {
		return event{rec: record{Kind: kindReady}}
	}
	if !json.Valid(line) {
		return event{err: fmt.Errorf("undecodable IPC message %q", abbrev(string(line)))}
	}
	return event{raw: append([]byte(nil), line...)}
}

// fileOnly refuses the interop scenario on NATS.
func (r *Runner) fileOnly() error {
	if r.NATS != "" {
		return fmt.Errorf("bench: interop mixes troupe's writers with the peer's Node writers into one inbox file: the file store only, not NATS at %s", r.NATS)
	}
	return nil
}
