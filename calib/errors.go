package calib

import (
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

func errf(file string, line int, field, format string, a ...any) error {
	return inputerr.Errorf(file, line, field, format, a...)
}

// headerColumns maps a CSV header's names (trimmed) to their columns and
// refuses, at line, one that lacks a field of need: "missing column
// (<needs> f1, f2, …)", needs saying which table, e.g. "a trtllm-bench
// table needs".
func headerColumns(name string, line int, header, need []string, needs string) (map[string]int, error) {
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, f := range need {
		if _, ok := col[f]; !ok {
			return nil, errf(name, line, f, "missing column (%s %s)", needs, strings.Join(need, ", "))
		}
	}
	return col, nil
}
