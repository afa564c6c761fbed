package policy

import "slices"

// members is a policy's record of the workers a View listed, for state
// derived from the membership as a whole (a hash ring over the workers,
// a tree's tenants): sync reports whether the membership changed since
// its last call, and live answers for one id in O(1).
type members struct {
	ids  []int  // the view's slice as last seen
	live []bool // by id
	seen bool
	gone []int // the ids that left at the last change
}

// sync takes the view's worker list ws and reports whether it differs
// from the last one (true on the first call). A view returns the same
// slice until its membership changes (View.Workers), so the common case
// is one comparison; another slice is compared element by element.
func (m *members) sync(ws []int) bool {
	if m.seen && len(ws) == len(m.ids) && (len(ws) == 0 || &ws[0] == &m.ids[0]) {
		return false
	}
	if m.seen && slices.Equal(ws, m.ids) {
		m.ids = ws
		return false
	}
	m.gone = m.gone[:0]
	for _, w := range m.ids {
		if !slices.Contains(ws, w) {
			m.gone = append(m.gone, w)
		}
	}
	m.ids, m.seen = ws, true
	clear(m.live)
	m.live = grown(m.live, IDBound(ws))
	for _, w := range ws {
		m.live[w] = true
	}
	return true
}

// has reports whether worker w was in the last list synced.
func (m *members) has(w int) bool { return w < len(m.live) && m.live[w] }

// grown returns s with length at least n, its elements kept and new ones
// zero: per-worker state indexed by id, grown when a worker joins.
func grown[T any](s []T, n int) []T {
	if len(s) >= n {
		return s
	}
	return append(s, make([]T, n-len(s))...)
}
