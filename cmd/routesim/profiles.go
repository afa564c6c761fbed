package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/model"
)

// profilesCmd lists the built-in profiles, and what every other catalogue
// deployment falls back to (its kernel prior or a roofline estimate).
func profilesCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim profiles", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.BoolP("verbose", "v", false, "print each profile's source, note and posterior in full")
	files := fs.StringArray("profile", nil, "list this profile JSON (e.g. a calibrate output's profile.json) instead of the built-in ones; repeatable")
	gpuArg := fs.String("gpu", "", "show what routesim derives for this GPU (a catalogue name or a GPU file NAME.json) with each catalogue model, or --model")
	modelArg := fs.String("model", "", "show what routesim derives for this model (a catalogue name, or a Hugging Face config.json or its folder) on each catalogue GPU, or --gpu")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim profiles [-v] [--profile FILE]...\n       routesim profiles [--gpu NAME|FILE.json] [--model NAME|DIR|config.json]\n\nList the built-in step-time profiles (GPU, model, TP, kind, implied prefill cost, MFU and decode bandwidth use, fit error) and what every other catalogue deployment falls back to; with --profile, the given profile files instead.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (profile files go after --profile)", fs.Arg(0))}
	}
	if *gpuArg != "" || *modelArg != "" {
		if len(*files) > 0 {
			return usageError{fmt.Errorf("--profile lists profile files; --gpu and --model show derived deployments: use one or the other")}
		}
		return derivedCmd(stdout, *gpuArg, *modelArg)
	}
	profiles := model.BuiltinProfiles()
	if len(*files) > 0 {
		profiles = profiles[:0]
		for _, name := range *files {
			p, err := readProfileFile(name)
			if err != nil {
				return err
			}
			profiles = append(profiles, p)
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tMODEL\tTP\tQUANT\tKIND\tFORM\tPREFILL µs/tok\tPREFILL MFU\tDECODE HBM\tFIT ERROR\tUSED\tNAME")
	builtin := map[string]bool{}
	blis := map[string]string{}
	cat := model.DefaultCatalogue()
	trt, nBLIS := 0, 0
	for _, p := range profiles {
		key := fmt.Sprintf("%s/%s/%d/%s", strings.ToLower(p.GPU), strings.ToLower(p.Model), p.TP, p.Quant)
		used := "default"
		switch {
		case len(*files) > 0:
			used = "--profile FILE"
		case p.Engine != "":
			used, trt = "--engine trtllm", trt+1
		case p.IsBLIS():
			used, nBLIS = "--profile blis", nBLIS+1
			blis[key] = p.Name
		case p.IsKernel():
			builtin[key] = true
			if def, err := model.FindProfile(p.GPU, p.Model, p.TP); err != nil || def.Name != p.Name || def.Quant != p.Quant {
				used = "transfers only" // another profile of its deployment is the default
			}
		}
		form := "linear"
		if p.IsKernel() {
			form = "kernel"
		}
		pre, mfu, hbm := "-", "-", "-"
		if d, err := profileDeployment(cat, p); err == nil {
			im := p.Implied(d)
			pre, mfu, hbm = fmt.Sprintf("%.1f", im.PrefillNsPerToken/1e3), fmt.Sprintf("%.0f%%", 100*im.PrefillMFU), fmt.Sprintf("%.0f%%", 100*im.DecodeHBMUtil)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.GPU, p.Model, p.TP, p.Quant, p.Basis(), form, pre, mfu, hbm, p.FitError, used, p.Name)
		if *verbose {
			fmt.Fprintf(tw, "\tsource: %s\t\t\t\t\t\n", p.Source)
			fmt.Fprintf(tw, "\t%s (routesim stacks)\t\t\t\t\t\n", stackLine(p))
			if p.Note != "" {
				fmt.Fprintf(tw, "\tnote: %s\t\t\t\t\t\n", p.Note)
			}
			if q := p.Posterior; q != nil {
				var parts []string
				for i, name := range q.Params {
					tag := "prior"
					switch {
					case q.Identified[i]:
						tag = "pinned"
					case q.Narrowed[i]:
						tag = "narrowed"
					}
					parts = append(parts, fmt.Sprintf("%s ±%.0f%% (%s)", name, 100*(math.Exp(q.SD()[i])-1), tag))
				}
				fmt.Fprintf(tw, "\tposterior: %s\t\t\t\t\t\n", strings.Join(parts, ", "))
			}
		}
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nPREFILL: a %d-token fresh chunk's step time per token and the FLOPs it executes (linear layers and causal attention; lm_head only for sampled tokens) over peak; DECODE HBM: a %d-sequence × %d-token decode step's bytes over peak bandwidth.\n",
		model.ImpliedRefChunk, model.ImpliedRefDecodeSeq, model.ImpliedRefDecodeCtx)
	if nBLIS > 0 {
		fmt.Fprintf(stdout, "Profiles named *.blis are BLIS's linear fits (form linear: step time linear in prefill and decode tokens, no attention over the context, no KV reads), kept for comparison under --profile blis and never a default: with prompts of thousands of tokens they predict steps far too short. Their deployments run on the default listed below.\n")
	}
	if trt > 0 {
		fmt.Fprintf(stdout, "Profiles named *.trtllm-bench describe TensorRT-LLM workers (--engine trtllm) only: fitted to published trtllm-bench throughput; --engine trtllm carries them to other GPUs and TP degrees of their model and architecture (flagged as transferred), and runs any other deployment on its vLLM profile below.\n")
	}
	if len(*files) > 0 {
		return nil
	}
	printNames(stdout, cat)
	var roof []string
	for _, g := range cat.GPUs {
		for _, m := range cat.Models {
			for _, tp := range []int{1, 2, 4, 8} {
				for _, q := range []model.Quant{model.BF16, model.FP8} {
					if builtin[fmt.Sprintf("%s/%s/%d/%s", strings.ToLower(g.Name), strings.ToLower(m.Name), tp, q)] {
						continue
					}
					d := model.Deployment{GPU: g, Model: m, TP: tp, Quant: q, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
					if _, err := d.KVBlocks(16, model.Engine{MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}); err != nil {
						continue // does not fit
					}
					p := model.ProfileFor(d, false)
					kind, detail := string(p.Basis()), ""
					switch src, transferred := model.TransferredFrom(p); {
					case transferred:
						detail = "of " + src
					case p.IsKernel():
						detail = strings.SplitN(p.LinearCurve.Source, ",", 2)[0]
						if p.LinearCurve.CrossArchitecture {
							detail += " (cross-architecture)"
						}
					}
					if b, ok := blis[fmt.Sprintf("%s/%s/%d/%s", strings.ToLower(g.Name), strings.ToLower(m.Name), tp, q)]; ok {
						detail += "; comparison: --profile blis (" + b + ")"
					}
					if transferred := kind == string(model.BasisTransfer); transferred && *verbose {
						detail += "\n      " + p.Note
					}
					roof = append(roof, fmt.Sprintf("%s/%s/tp%d/%s\t%s\t%s", g.Name, m.Name, tp, q, kind, detail))
				}
			}
		}
	}
	fmt.Fprintf(stdout, "\nEvery other deployment that fits in memory runs uncalibrated (kind \"transfer\", \"kernel prior\" or \"roofline\", flagged in every output, with the nearest validation case's error): a transfer of the closest measured profile of its model (same GPU, else same architecture; its kernel prior scaled by the measured/prior ratios, assumptions in the profile's note), else its kernel prior — the measured layer curve of its architecture's library transferred by FLOP and byte ratios, with priors for the other terms — or, where none applies, a roofline estimate:\n")
	tw = tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	for _, r := range roof {
		fmt.Fprintf(tw, "  %s\n", r)
	}
	return tw.Flush()
}

// profileDeployment resolves the catalogue deployment a profile describes.
func profileDeployment(cat *model.Catalogue, p *model.Profile) (model.Deployment, error) {
	g, err := cat.GPU(p.GPU)
	if err != nil {
		return model.Deployment{}, err
	}
	m, err := cat.Model(p.Model)
	if err != nil {
		return model.Deployment{}, err
	}
	return model.Deployment{GPU: g, Model: m, TP: p.TP, Quant: p.Quant, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}, nil
}

// readProfileFile reads and validates one profile JSON file.
func readProfileFile(name string) (*model.Profile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	defer f.Close()
	return model.ReadProfile(f, name)
}

// printNames lists the names --gpu and --model take: each GPU with its
// aliases, each model with its Hugging Face id (and a file for either).
func printNames(w io.Writer, cat *model.Catalogue) {
	var gpus, models []string
	for _, g := range cat.GPUs {
		n := g.Name
		if len(g.Aliases) > 0 {
			n += " (" + strings.Join(g.Aliases, ", ") + ")"
		}
		gpus = append(gpus, n)
	}
	for _, m := range cat.Models {
		models = append(models, m.Name+" ("+m.HFID+")")
	}
	fmt.Fprintf(w, "\n--gpu takes exactly one of these names or aliases (any case; '-', '_' ignored), or a GPU file NAME.json: %s.\n", strings.Join(gpus, "; "))
	fmt.Fprintf(w, "--model takes one of these names or Hugging Face ids, or a config.json or its folder: %s.\n", strings.Join(models, "; "))
}
