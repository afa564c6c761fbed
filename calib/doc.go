// Package calib will fit step-time profiles (package model) to measured
// runs: AIPerf exports and NVML samples, by re-simulating them.
//
// # Reading guide
//
// Nothing is implemented here yet; the package exists so the import graph
// of the design (calib imports model and sim, nothing imports calib but the
// CLI) is fixed from the start. Until it lands, routesim's built-in profile
// comes from public coefficients (see model/data/profiles).
package calib
