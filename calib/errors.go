package calib

import "github.com/routesim/routesim/internal/inputerr"

func errf(file string, line int, field, format string, a ...any) error {
	return inputerr.Errorf(file, line, field, format, a...)
}
