package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/explore"
	"github.com/routesim/routesim/scenario"
)

// exploreWindow is the embedded arXiv-trace window with the filters
// routesim sweep applies by default (windowDefaults; the rate scale is the
// page's control), as run flags: the explorer's default base, so that each
// point's routesim run command prints the point's numbers.
func exploreWindow() []string {
	args := []string{"--trace", "arxiv-window"}
	for _, d := range windowDefaults {
		if d.flag != "rate-scale" {
			args = append(args, "--"+d.flag, d.value)
		}
	}
	return args
}

func exploreCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim explore", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("scenario", "", "scenario file the page starts from (JSON, as routesim run --scenario); default: sweep's arXiv-trace window on 8 × A100-SXM4-40GB, Qwen3-8B")
	addr := fs.String("addr", exploreAddr, "address to serve on (port 0 = any free port); an address off the loopback interface must be given explicitly")
	export := fs.String("export", "", "write the page into this folder as static files, the simulator compiled to WebAssembly (needs the go command and the routesim source tree; the default scenario only), and exit")
	request := fs.String("request", "", "answer one view's request (JSON) on stdout as the server would, and exit (the exported page's simulator)")
	fs.MarkHidden("request")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim explore [--scenario FILE] [--addr HOST:PORT]\n       routesim explore --export DIR\n\nServe a local web page whose controls (N, policies and their parameters, Dynamo and vLLM releases, load, GPU, model, seeds) re-simulate the trade-off as they move, each point exactly as routesim run computes it.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("explore: unexpected arguments %q", fs.Args())}
	}
	if *export != "" && (*file != "" || fs.Changed("addr") || *request != "") {
		return usageError{errors.New("--export publishes the default scenario as files: it takes no --scenario (a browser reads no files), --addr or --request")}
	}
	if err := explore.CheckAddr(*addr, fs.Changed("addr")); err != nil {
		return usageError{err}
	}
	opt, err := exploreOptions(*file)
	if err != nil {
		return err
	}
	if *export != "" {
		if err := explore.Export(*export, opt, "github.com/routesim/routesim/cmd/routesim"); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "routesim explore: wrote %s; serve it with any static web server, e.g. python3 -m http.server -d %s\n", *export, *export)
		return err
	}
	srv, err := explore.New(opt)
	if err != nil {
		return err
	}
	if *request != "" {
		var req explore.Request
		dec := json.NewDecoder(strings.NewReader(*request))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return usageError{fmt.Errorf("--request: %w", err)}
		}
		if err := srv.Run(context.Background(), &req, stdout); err != nil {
			return usageError{err}
		}
		return nil
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usageError{fmt.Errorf("--addr %s: %w", *addr, err)}
	}
	fmt.Fprintf(stdout, "routesim explore: serving http://%s/ (Ctrl-C to stop)\n", ln.Addr())
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// exploreOptions are the page's base arguments and opening view: the
// scenario file's, or the default window's, checked by building it.
func exploreOptions(file string) (explore.Options, error) {
	base := exploreWindow()
	if file != "" {
		base = []string{"--scenario", file}
	}
	_, spec, err := exploreBuild(base)
	if err != nil {
		return explore.Options{}, err
	}
	init := explore.Request{N: spec.N, Ns: "2..16", Policies: []string{"round-robin", "kv"}, Seed: spec.Seed, Seeds: 1, Flags: map[string]string{}}
	if spec.N > 16 {
		init.Ns = fmt.Sprintf("%d..%d:%d", max(spec.N/2, 1), spec.N*2, max(spec.N/8, 1))
	}
	if file != "" && spec.Policy != "round-robin" && spec.Policy != "kv" {
		init.Policies = append(init.Policies, spec.Policy)
	}
	switch spec.Workload {
	case "sessions":
		init.Flags["concurrency"] = strconv.Itoa(spec.Sessions.Concurrency)
	default:
		init.Flags["rate-scale"] = strconv.FormatFloat(spec.RateScale, 'g', -1, 64)
	}
	if file == "" {
		init.Flags["rate-scale"] = strconv.FormatFloat(windowRateScale, 'g', -1, 64)
	}
	return explore.Options{
		Build: exploreBuild, Base: base, Initial: init, Workload: spec.Workload,
		BaseValues: map[string]string{"gpu": spec.GPU, "model": spec.Model, "tp": strconv.Itoa(spec.TP),
			"dynamo-version": spec.DynamoVersion, "vllm-version": spec.VLLMVersion},
		CommandLine: commandLine,
	}, nil
}

// exploreBuild validates and builds one configuration from routesim run's
// arguments by the steps runCmd takes (aliases, scenario file, flags,
// client and engine defaults, buildSim, the policy), so the page refuses
// what run refuses, with run's words, and simulates what run simulates.
func exploreBuild(args []string) (_ *scenario.Built, _ *scenario.Spec, err error) {
	// run's errors name flags, not scenario fields (withFlags, as run() does)
	defer func() { err = withFlags(err) }()
	args, err = expandAliases(args)
	if err != nil {
		return nil, nil, err
	}
	fs := pflag.NewFlagSet("routesim run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f, src, err := scenarioBase(args, scenario.Defaults())
	if err != nil {
		return nil, nil, err
	}
	defer func() { err = located(err, fs, src) }()
	registerSim(fs, &f)
	fs.String("scenario", "", "")
	if _, err := parseFlags(fs, args); err != nil {
		return nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, usageError{fmt.Errorf("run: unexpected arguments %q", fs.Args())}
	}
	if err := applyClientFlags(fs, &f); err != nil {
		return nil, nil, err
	}
	applyEngineDefaults(fs, src, &f)
	st, err := buildSim(fs, &f)
	if err != nil {
		return nil, nil, err
	}
	if _, err := st.Run(f.Seed).Policy(); err != nil {
		return nil, nil, usageError{err}
	}
	return st, &f, nil
}

// exploreAddr is where routesim explore serves by default: loopback only.
const exploreAddr = "127.0.0.1:8080"
