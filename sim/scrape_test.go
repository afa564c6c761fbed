package sim

import "testing"

// With a scrape period the router sees the workers' metrics as of its last
// scrape (llm-d's --refresh-metrics-interval), after the metrics lag.
func TestPublishedMetricsAsOfTheLastScrape(t *testing.T) {
	var now Time
	for _, c := range []struct {
		lag, scrape Time
		at          []Time
		want        []int
	}{
		// samples: used 5 published at 10 ms, 9 at 60 ms
		{0, 0, []Time{9, 10, 59, 60, 99}, []int{0, 5, 5, 9, 9}},
		{0, 50, []Time{10, 49, 50, 60, 99, 100}, []int{0, 0, 5, 5, 5, 9}},
		{5, 50, []Time{55, 104, 105}, []int{5, 5, 9}},
	} {
		r := &router{engine: make([]engineFeed, 1), now: func() Time { return now }, metricsLag: c.lag * Millisecond, scrape: c.scrape * Millisecond}
		r.publishUsage(0, 10*Millisecond, 5, 2)
		r.publishUsage(0, 60*Millisecond, 9, 3)
		for i, at := range c.at {
			now = at * Millisecond
			if got := r.EngineKVUsed(0); got != c.want[i] {
				t.Errorf("lag %d ms, scrape %d ms, at %d ms: used %d, want %d", c.lag, c.scrape, at, got, c.want[i])
			}
		}
	}
}
