package calib

import (
	"fmt"
	"strings"
)

// quantity is what an AIPerf metric measures: which units it may carry
// and the one routesim compares it in.
type quantity struct {
	name  string             // "a time unit", for messages
	unit  string             // the unit values are converted to
	scale map[string]float64 // unit → factor to unit
	known []string           // the accepted units, in message order
}

// The quantities routesim reads from AIPerf exports. AIPerf's units
// (aiperf/common/enums/metric_enums.py) are ns, us, ms and sec for time,
// requests/sec and tokens/sec for rates, requests and tokens for counts;
// "s" and "µs" are the SI spellings of two of them.
var (
	timeQuantity = quantity{name: "a time unit", unit: "ms",
		scale: map[string]float64{"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1, "sec": 1e3, "s": 1e3},
		known: []string{"ns", "us", "ms", "sec"}}
	rateQuantity = quantity{name: "a request rate", unit: "requests/sec",
		scale: map[string]float64{"requests/sec": 1, "requests/s": 1},
		known: []string{"requests/sec"}}
	requestQuantity = quantity{name: "a request count", unit: "requests",
		scale: map[string]float64{"requests": 1, "count": 1},
		known: []string{"requests"}}
	tokenQuantity = quantity{name: "a token count", unit: "tokens",
		scale: map[string]float64{"tokens": 1},
		known: []string{"tokens"}}
)

// summaryQuantities are the summary metrics routesim reads; their units
// are checked and converted. Other metrics keep their unit, unread.
var summaryQuantities = map[string]*quantity{
	"time_to_first_token": &timeQuantity, "inter_token_latency": &timeQuantity,
	"time_to_second_token": &timeQuantity, "request_latency": &timeQuantity,
	"request_throughput": &rateQuantity, "request_count": &requestQuantity,
	"error_request_count": &requestQuantity, "good_request_count": &requestQuantity,
}

// factor is the factor from unit to q's unit; ok is false for a unit of
// another quantity, or none AIPerf writes.
func (q *quantity) factor(unit string) (f float64, ok bool) {
	f, ok = q.scale[unit]
	return f, ok
}

// refuse is the message for a unit q does not accept.
func (q *quantity) refuse(unit string) string {
	return fmt.Sprintf("%q is not %s (AIPerf writes %s)", unit, q.name, strings.Join(q.known, ", "))
}
