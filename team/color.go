package team

// Palette is the fixed color list, in assignment order (PROTOCOL.md 10.7).
// The lead owns the first entry; teammates start at the second.
var Palette = [...]string{"red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan"}

// NextColor returns the color for a new teammate: the first palette color,
// starting after the lead's, that no member holds; once every color is taken,
// the least used one (earliest in palette order on ties).
func (c *Config) NextColor() string {
	used := make(map[string]int, len(Palette))
	used[Palette[0]] = 1 // the lead's, held in memory though not on disk
	for _, m := range c.Members {
		if m.Color != "" {
			used[m.Color]++
		}
	}
	best, bestN := "", int(^uint(0)>>1)
	for i := range Palette {
		col := Palette[(i+1)%len(Palette)]
		if used[col] < bestN {
			best, bestN = col, used[col]
		}
	}
	return best
}
