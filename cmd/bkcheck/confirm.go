package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/bkcheck/bkcheck/bridge"
	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/schema"
)

// directory refuses a setting that names something other than a directory
// (a file where the command would make one).
func (cl *commandLine) directory(name, path string) {
	if fi, err := os.Stat(path); path != "" && err == nil && !fi.IsDir() {
		cl.probs.Add(name, "%s is a file, not a directory", path)
	}
}

// clusterSettings are the switches of both commands that run a real
// cluster (confirm and conform), declared once. The release conform runs
// is its model's --bookkeeper: the walks are that release's behaviours.
type clusterSettings struct {
	StepTimeout time.Duration `name:"step-timeout" unit:"D" help:"how long an expected frame, callback or state may take before the step is called diverged (a bound on failure, never a pause)"`
	JSON        bool          `name:"json" help:"write the result as one JSON object on stdout"`
}

func defaultClusterSettings() clusterSettings {
	return clusterSettings{StepTimeout: 20 * time.Second}
}

// check adds the settings' problems to the command line's and returns the
// bridge's options.
func (s clusterSettings) check(cl *commandLine) bridge.Options {
	if s.StepTimeout <= 0 {
		cl.probs.Add("step-timeout", "must be > 0 (got %v)", s.StepTimeout)
	}
	return bridge.Options{StepTimeout: s.StepTimeout}
}

// confirmSettings are the switches of bkcheck confirm.
type confirmSettings struct {
	clusterSettings
	BookKeeper string `name:"bookkeeper" unit:"RELEASE" help:"the BookKeeper release to run (a version of org.apache.bookkeeper:bookkeeper-server that Maven resolves; not given: the release the trace's model is, else the default)"`
	Dir        string `name:"dir" unit:"DIR" help:"keep the cluster's data and logs in DIR (not given: a temporary directory, kept only when the trace diverges)"`
	Fix        string `name:"fix" unit:"VARIANT" help:"run the trace with a candidate fix: the variant's rules woven into the release's classes by the bookies' agent (a fix the model says is clean should make a finding's trace diverge where it changes a step)"`
}

var confirmSchema = schema.MustOf(confirmSettings{})

func confirmFlags() []section {
	return []section{{"Confirmation", schema.Target{S: confirmSchema, V: &confirmSettings{clusterSettings: defaultClusterSettings()}}}}
}

// Exit codes of bkcheck confirm, beside the common ones (2 usage, 1 error,
// 130 interrupted).
const (
	exitConfirmAgreed   = exitOK        // every step agreed; BookKeeper keeps the property along the trace
	exitConfirmNotDrive = exitUnknown   // the harness cannot drive a step: neither confirmed nor refuted
	exitConfirmRepro    = exitViolation // BookKeeper violates the property too
	exitConfirmDiverged = 14            // BookKeeper did not do what the model did
	exitConfirmUnasked  = exitUnknown   // every step agreed; the property is not one the harness asks of BookKeeper
)

// runConfirm is `bkcheck confirm TRACE.itf.json`: the trace executed on a
// real BookKeeper cluster (package bridge).
func runConfirm(ctx context.Context, inv *invocation) int {
	cl := inv.cl
	s := settingsOf[confirmSettings](cl)
	if len(cl.args) != 1 {
		cl.probs.Add("", "give one trace file (got %d arguments)", len(cl.args))
	}
	opts := s.check(cl)
	opts.Version, opts.Dir, opts.Fix = s.BookKeeper, s.Dir, s.Fix
	if s.Fix != "" {
		if err := bridge.CheckFix(s.Fix); err != nil {
			cl.probs.Add("fix", "%v", err)
		}
	}
	cl.notEmpty("bookkeeper", s.BookKeeper == "", "give a release (such as "+bridge.DefaultVersion+"), or leave it out for the trace's own")
	cl.notEmpty("dir", s.Dir == "", "give a directory, or leave it out for a temporary one")
	cl.notEmpty("fix", s.Fix == "", "give a variant whose rules the agent weaves (such as durable-fence-replayable), or leave it out")
	cl.directory("dir", s.Dir)
	if code := cl.report(inv.stderr); code != exitOK {
		return code
	}
	if !s.JSON {
		opts.Progress = func(format string, args ...any) { fmt.Fprintf(inv.stderr, format+"\n", args...) }
	}
	res, err := bridge.Confirm(ctx, cl.args[0], opts)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			fmt.Fprintln(inv.stderr, "bkcheck confirm: interrupted; every process of the cluster stopped")
			return exitInterrupted
		case errors.Is(err, bridge.ErrTrace), errors.Is(err, os.ErrNotExist), errors.Is(err, bridge.ErrVersion):
			fmt.Fprintf(inv.stderr, "bkcheck confirm: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(inv.stderr, "bkcheck confirm: %v\n", err)
		return exitError
	}
	if s.JSON {
		b, _ := json.Marshal(res)
		fmt.Fprintln(inv.stdout, string(b))
	} else {
		fmt.Fprint(inv.stdout, res.Text())
	}
	switch res.Verdict {
	case bridge.Reproduced:
		return exitConfirmRepro
	case bridge.Diverged:
		return exitConfirmDiverged
	case bridge.NotExecutable:
		return exitConfirmNotDrive
	case bridge.Unasked:
		return exitConfirmUnasked
	}
	return exitConfirmAgreed
}

// conformSettings are bkcheck conform's own switches, beside simulate's.
type conformSettings struct {
	clusterSettings
	Out string `name:"out" unit:"DIR" help:"where to write each walk's trace (walk-SEED.itf.json) and the report (conformance.json)"`
}

var conformSchema = schema.MustOf(conformSettings{})

func conformFlags() []section {
	cfg := check.DefaultSimConfig()
	cfg.Traces = 20
	return []section{
		{"Model and walks", schema.Target{S: check.SimSchema, V: &cfg}},
		{"Conformance", schema.Target{S: conformSchema, V: &conformSettings{clusterSettings: defaultClusterSettings()}}},
	}
}

// runConform is `bkcheck conform`: random walks of the model, each
// executed on a fresh real cluster (package bridge), and the agreement.
func runConform(ctx context.Context, inv *invocation) int {
	cl := inv.cl
	cfg, s := settingsOf[check.SimConfig](cl), settingsOf[conformSettings](cl)
	if len(cl.args) > 0 {
		cl.probs.Add("", "unexpected arguments: %v", cl.args)
	}
	cfg.EnsureDefaults()
	cl.noDefaultsOverride(schema.Target{S: check.SimSchema, V: cfg})
	cl.validate(cfg.Validate())
	if cfg.Duration != 0 {
		cl.probs.Add("duration", "conform runs a number of walks (--traces), each on its own cluster, not for a time")
	}
	if cfg.Model == check.ModelV413 {
		cl.probs.Add("model", "the release-4.13 spec is not a client the harness runs: its walks are of the current model (leave --model out)")
	}
	if why := bridge.RefusedSettings(cfg.Params); why != "" {
		cl.probs.Add("", "every walk would be NOT EXECUTABLE: %s", why)
	}
	if s.Out == "" {
		cl.probs.Add("out", "is required: the directory for the walks' traces and the report")
	} else if ents, err := os.ReadDir(s.Out); err == nil && len(ents) > 0 {
		cl.probs.Add("out", "%s is not empty", s.Out)
	}
	cl.directory("out", s.Out)
	opts := s.check(cl)
	opts.Version = cfg.BookKeeper
	if code := cl.report(inv.stderr); code != exitOK {
		return code
	}
	if !s.JSON {
		opts.Progress = func(format string, args ...any) { fmt.Fprintf(inv.stderr, format+"\n", args...) }
	}
	rep, err := bridge.Conform(ctx, *cfg, s.Out, opts)
	if rep != nil {
		if werr := rep.Save(s.Out); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(inv.stderr, "bkcheck conform: interrupted; every process of the cluster stopped; the walks run so far are in "+s.Out)
			return exitInterrupted
		}
		fmt.Fprintf(inv.stderr, "bkcheck conform: %v\n", err)
		return exitError
	}
	if s.JSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(inv.stdout, string(b))
	} else {
		fmt.Fprint(inv.stdout, rep.Text())
	}
	if len(rep.Divergence) > 0 {
		return exitConfirmDiverged
	}
	if rep.Verdicts["error"] > 0 {
		return exitError
	}
	return exitOK
}
