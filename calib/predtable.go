package calib

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// PredictionTable renders predictions as validate prints them: each
// statistic measured and predicted, the 10–90 % band over coefficient
// draws, the error and whether the band holds the measurement.
func PredictionTable(rows []PredRow) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "run\tstatistic\tmeasured\tpredicted\tband 10%\tband 90%\terror\tin band\t\n")
	for _, r := range rows {
		lo, hi, in := "-", "-", "-"
		if r.BandLo != nil {
			lo, hi, in = fmt.Sprintf("%.4g", *r.BandLo), fmt.Sprintf("%.4g", *r.BandHi), "no"
			if r.InBand {
				in = "yes"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%s\t%s\t%+.1f%%\t%s\t\n", r.Arm, r.Stat, r.Measured, r.Predicted, lo, hi, r.ErrPct, in)
	}
	tw.Flush()
	return b.String()
}
