package model

import (
	"fmt"
	"sort"
	"strings"
)

// BLISName is the profile name (--profile blis, "profile": "blis" in a
// scenario) that asks for the deployment's built-in BLIS linear fit: a
// comparison, never a default (BLISProfileFor).
const BLISName = "blis"

// IsBuiltinName says whether a --profile value names a built-in choice
// (kernel-prior, blis) rather than a file.
func IsBuiltinName(name string) bool { return name == KernelPriorName || name == BLISName }

// Basis says where a profile's step times come from, in the words
// routesim prints (finer than Kind, which has no word for a kernel prior
// or a linear fit).
type Basis string

// The bases of a profile.
const (
	// BasisMeasured: a kernel profile fitted to measurements of this
	// deployment.
	BasisMeasured Basis = "measured"
	// BasisLinearFit: fitted to measurements of this deployment, in the
	// linear (BLIS) form, without the attention and KV-read terms.
	BasisLinearFit Basis = "linear fit"
	// BasisTransfer: a measured kernel profile of a neighbouring
	// deployment carried to this one through the kernel step model.
	BasisTransfer Basis = "transfer"
	// BasisKernelPrior: measured layer kernels transferred to the
	// deployment, with physical priors for the other terms; nothing fitted.
	BasisKernelPrior Basis = "kernel prior"
	// BasisRoofline: peak FLOP/s and bandwidth at assumed efficiencies.
	BasisRoofline Basis = "roofline"
)

// Basis says where p's step times come from.
func (p *Profile) Basis() Basis {
	switch {
	case p.Kind == "roofline":
		return BasisRoofline
	case p.Kind == "measured" && p.IsKernel():
		return BasisMeasured
	case p.Kind == "measured":
		return BasisLinearFit
	}
	if _, ok := TransferredFrom(p); ok || !p.IsKernel() {
		return BasisTransfer
	}
	return BasisKernelPrior
}

// IsBLIS says whether p is one of BLIS's linear fits (a shipped *.blis
// profile, BLISProfile).
func (p *Profile) IsBLIS() bool {
	return !p.IsKernel() && p.Engine == "" && strings.HasSuffix(p.Name, ".blis")
}

// BLISProfileFor returns the built-in BLIS linear fit of deployment d (the
// same GPU, model, TP and weights), or an error listing the deployments
// that have one. The fits are kept for comparison: they have no
// attention cost over the context and no KV-read term, so with prompts of
// thousands of tokens they predict steps far too short, and no deployment
// takes one by default (ProfileFor).
func BLISProfileFor(d Deployment) (*Profile, error) {
	var have []string
	for _, p := range BuiltinProfiles() {
		if !p.IsBLIS() {
			continue
		}
		if strings.EqualFold(p.GPU, d.GPU.Name) && strings.EqualFold(p.Model, d.Model.Name) && p.TP == d.TP && p.Quant == d.Quant {
			return p, nil
		}
		have = append(have, fmt.Sprintf("%s/%s/tp%d/%s", p.GPU, p.Model, p.TP, p.Quant))
	}
	sort.Strings(have)
	return nil, fmt.Errorf("model: no BLIS fit for %s/%s/tp%d/%s; BLIS fits exist for %s",
		d.GPU.Name, d.Model.Name, d.TP, d.Quant, strings.Join(have, ", "))
}

// SameArchitecture says whether two GPUs share an architecture as the
// kernel model sees it: the same GPU, or two whose kernel library was
// measured on that architecture and is the same (A100-40GB and -80GB;
// H100 and H200).
func SameArchitecture(a, b GPU) bool {
	return strings.EqualFold(a.Name, b.Name) ||
		(a.KernelLibrary == b.KernelLibrary && a.KernelSameArchitecture && b.KernelSameArchitecture)
}
