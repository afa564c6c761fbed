package validate

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/model"
)

// TestDefaultBeatsBLISOnLongPrompts: why no deployment defaults to a
// linear fit. On the llm-d case's measured runs (one vLLM replica on an
// A100-SXM4-80GB, Llama-3.1-8B, 21k-token multi-round QA), BLIS's fit of
// exactly that deployment, which has no attention over the context and no
// KV reads, predicts every loaded run's median TTFT and mean ITL below the
// measured (its steps are too short); the deployment's default (its
// kernel prior, nothing fitted) is closer on both, run by run. Each
// statistic is logged (go test ./validate -run TestDefaultBeatsBLIS -v).
func TestDefaultBeatsBLISOnLongPrompts(t *testing.T) {
	dir, err := extract("llmd-llama3.1-8b-lmbench")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec, err := calib.LoadSpec(filepath.Join(dir, "predict.json"))
	if err != nil {
		t.Fatal(err)
	}
	dep, err := spec.Runs[0].Setup.Deployment()
	if err != nil {
		t.Fatal(err)
	}
	blis, err := model.BLISProfileFor(dep)
	if err != nil {
		t.Fatal(err)
	}
	def := model.ProfileFor(dep, spec.Runs[0].Setup.EnforceEager)
	if def.Basis() != model.BasisKernelPrior {
		t.Fatalf("default %s is a %s", def.Name, def.Basis())
	}
	predict := func(p *model.Profile) map[[2]string]calib.PredRow {
		rows, err := calib.Predict(spec, p, nil, 0, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		out := map[[2]string]calib.PredRow{}
		for _, r := range rows {
			out[[2]string{r.Arm, r.Stat}] = r
		}
		return out
	}
	b, d := predict(blis), predict(def)
	n := 0
	for _, run := range spec.Runs {
		for _, st := range []string{"ttft_ms_p50", "itl_ms_avg"} {
			rb, okb := b[[2]string{run.Arm, st}]
			rd, okd := d[[2]string{run.Arm, st}]
			if !okb || !okd {
				continue
			}
			n++
			t.Logf("%s %s: measured %.4g, BLIS %.4g (%+.1f %%), default %.4g (%+.1f %%)", run.Arm, st, rb.Measured, rb.Predicted, rb.ErrPct, rd.Predicted, rd.ErrPct)
			if rb.Ratio >= 1 {
				t.Errorf("%s %s: BLIS predicts %.2f × the measured, not below it", run.Arm, st, rb.Ratio)
			}
			if math.Abs(math.Log(rd.Ratio)) >= math.Abs(math.Log(rb.Ratio)) {
				t.Errorf("%s %s: the default (×%.2f) is no closer than BLIS (×%.2f)", run.Arm, st, rd.Ratio, rb.Ratio)
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d statistics compared", n)
	}
}
