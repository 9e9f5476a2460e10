package team

// Palette is the fixed color list, in assignment order (docs/protocol.md section 10.7).
// The lead owns the first entry; teammates start at the second.
var Palette = [...]string{"red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan"}

// NextColor returns the color for a new teammate: the first palette color,
// starting after the lead's, that no member holds; once every color is taken,
// the least used one (earliest in palette order on ties).
func (c *Config) NextColor() string { return nextColor(MemberList(c.Members)) }
