package filetool

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const (
	// maxSuggestScan bounds how many directory entries a missing-file
	// message looks at.
	maxSuggestScan = 2000
	// maxSuggestions bounds how many names it offers.
	maxSuggestions = 3
)

// similarNames returns up to maxSuggestions names in dir that look like
// name: the same name in another case, the same stem with another
// extension, or a small edit away.
func similarNames(dir, name string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxSuggestScan)
	lname := strings.ToLower(name)
	stem := strings.TrimSuffix(lname, filepath.Ext(lname))
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	for _, n := range names {
		ln := strings.ToLower(n)
		d := editDistance(lname, ln, 3)
		switch {
		case ln == lname:
			d = 0
		case strings.TrimSuffix(ln, filepath.Ext(ln)) == stem && stem != "":
			d = min(d, 1)
		}
		if d <= 2 && (d < len(lname)/2 || d == 0) {
			cands = append(cands, cand{n, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	var out []string
	for i := 0; i < len(cands) && i < maxSuggestions; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

// editDistance returns the Levenshtein distance of a and b in bytes, or
// limit if it is at least limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}
