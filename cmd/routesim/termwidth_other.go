//go:build !unix

package main

import "os"

// terminalWidth is 0 here: help wraps to $COLUMNS or 100 columns.
func terminalWidth(*os.File) int { return 0 }
