package calib

import "gonum.org/v1/gonum/mat"

// jacobian returns the columns ∂r/∂x_j of k coordinates by central
// differences of step h around the residuals r0: eval(j, dx) gives the
// residuals with coordinate j moved by dx. A column is nil where use(j) is
// false or where a step changed the residual vector's length (which
// requests completed): no usable slope there.
func jacobian(r0 []float64, k int, h float64, use func(j int) bool, eval func(j int, dx float64) []float64) [][]float64 {
	cols := make([][]float64, k)
	for j := range k {
		if !use(j) {
			continue
		}
		up, down := eval(j, h), eval(j, -h)
		if len(up) != len(r0) || len(down) != len(r0) {
			continue
		}
		col := make([]float64, len(r0))
		for i := range col {
			col[i] = (up[i] - down[i]) / (2 * h)
		}
		cols[j] = col
	}
	return cols
}

// gram returns JᵀJ over the non-nil columns (rows and columns of nil ones
// stay 0) and, with r not nil, Jᵀr.
func gram(cols [][]float64, r []float64) (*mat.SymDense, *mat.VecDense) {
	k := len(cols)
	jtj, jtr := mat.NewSymDense(k, nil), mat.NewVecDense(k, nil)
	for a := range k {
		if cols[a] == nil {
			continue
		}
		if r != nil {
			g := 0.0
			for i := range r {
				g += cols[a][i] * r[i]
			}
			jtr.SetVec(a, g)
		}
		for b := a; b < k; b++ {
			if cols[b] == nil {
				continue
			}
			s := 0.0
			for i := range cols[a] {
				s += cols[a][i] * cols[b][i]
			}
			jtj.SetSym(a, b, s)
		}
	}
	return jtj, jtr
}
