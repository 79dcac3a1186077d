package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/traces"
)

// simulateFlags are the settings of bkcheck simulate, with their defaults.
func simulateFlags() []section {
	cfg, out := check.DefaultSimConfig(), defaultOutput()
	return []section{
		{"Model and walks", schema.Target{S: check.SimSchema, V: &cfg}},
		{"Output", schema.Target{S: outputSchema, V: &out}},
		fileSection(),
	}
}

// runSimulate is `bkcheck simulate`: random walks with invariants checked
// on every visited state. A violation is reported with its trace and the
// command that reruns its walk alone; no violation is unknown, never ok.
// Probes are answered as check answers them, after the verdict: found
// (the first walk that reached one is its witness, written beside the
// trace file) or, not reached, unknown; never a violation, and the exit
// code is the verdict's.
func runSimulate(ctx context.Context, inv *invocation) int {
	cl, stdout, stderr := inv.cl, inv.stdout, inv.stderr
	cfg, out := settingsOf[check.SimConfig](cl), settingsOf[outputSettings](cl)
	cl.applyFile()
	if len(cl.args) > 0 {
		cl.probs.Add("", "unexpected arguments: %v", cl.args)
	}
	cfg.EnsureDefaults()
	cl.noDefaultsOverride(schema.Target{S: check.SimSchema, V: cfg})
	cl.validate(cfg.Validate())
	cl.emptyValues(len(cfg.Exclude) == 0, out.TraceOut)
	out.TraceOut = resolveTracePath(out.TraceOut, "")
	if out.TraceOut != "" {
		if err := atomicfile.CheckWritable(out.TraceOut); err != nil {
			cl.probs.Add("trace-out", "%v", err)
		}
	}
	if out.JSON {
		cl.jsonOut = stdout
	}
	if code := cl.report(stderr); code != exitOK {
		return code
	}
	rep := newReporter(stdout, stderr, out.JSON)
	rep.simStart(*cfg)
	res, err := check.Simulate(ctx, *cfg)
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck simulate: %v\n", err)
		return exitError
	}
	var writeErr error
	if res.Trace != nil && out.TraceOut != "" {
		if writeErr = traces.WriteITFFile(out.TraceOut, res.Trace); writeErr == nil {
			rep.traceFile = out.TraceOut
		}
	}
	writeErr = errors.Join(writeErr, rep.writeProbeWitnesses(res.Properties, out.TraceOut))
	rep.simResult(res)
	if writeErr != nil {
		fmt.Fprintf(stderr, "bkcheck simulate: %v\n", writeErr)
	}
	tr := res.Readable
	switch {
	case res.ModelError() != nil:
		return errorExitCode(res.ModelError())
	case tr != nil && tr.Deadlock:
		return exitDeadlock
	case tr != nil && (tr.Terminal || tr.Kind == "eventually"):
		return exitTerminal
	case tr != nil:
		return exitViolation
	case ctx.Err() != nil:
		return exitInterrupted
	}
	return exitUnknown
}
