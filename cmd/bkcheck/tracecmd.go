package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/traces"
)

// writeTrace saves a counterexample as ITF JSON, atomically (temporary file
// then rename), and returns its path, or "" with --trace-out none.
func writeTrace(f *checkFlags, tr *traces.Trace) (string, error) {
	path := f.traceOut
	switch {
	case path == "none":
		return "", nil
	case path == "" && f.dir != "":
		path = filepath.Join(f.dir, "bkcheck-trace.itf.json")
	case path == "":
		path = "bkcheck-trace.itf.json"
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bkcheck-trace-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := traces.EncodeITF(tmp, tr); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

func readTrace(path string) (*traces.Trace, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return traces.DecodeITF(fh)
}

// runReplay is `bkcheck replay FILE`: exit 0 when the model confirms the
// trace step by step, 1 naming the first step it does not confirm.
func runReplay(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: bkcheck replay FILE.itf.json")
		return exitUsage
	}
	tr, err := readTrace(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck replay: %v\n", err)
		if errors.Is(err, traces.ErrITF) || errors.Is(err, os.ErrNotExist) {
			return exitUsage
		}
		return exitError
	}
	if err := check.Replay(tr); err != nil {
		fmt.Fprintf(stderr, "bkcheck replay: %s: not confirmed: %v\n", args[0], err)
		return exitError
	}
	what := "violates " + tr.Invariant
	if tr.Deadlock {
		what = "deadlocks"
	}
	fmt.Fprintf(stdout, "confirmed: %d states, every step a transition of the model (%s), and the last state %s\n", len(tr.Steps), tr.Params, what)
	return exitOK
}

// runTrace is `bkcheck trace render FILE --format F`.
func runTrace(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 || args[0] != "render" {
		fmt.Fprintln(stderr, "usage: bkcheck trace render FILE --format text|mermaid|dot|html")
		return exitUsage
	}
	fs := flag.NewFlagSet("bkcheck trace render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "text, mermaid, dot or html")
	file, err := parseWithFile(fs, args[1:])
	if err != nil {
		return exitUsage
	}
	if file == "" {
		fmt.Fprintln(stderr, "usage: bkcheck trace render FILE --format text|mermaid|dot|html")
		return exitUsage
	}
	tr, err := readTrace(file)
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck trace render: %v\n", err)
		return exitUsage
	}
	switch *format {
	case "text":
		err = traces.RenderText(stdout, tr)
	case "mermaid":
		err = traces.RenderMermaid(stdout, tr)
	case "dot":
		err = traces.RenderDOT(stdout, tr)
	case "html":
		err = traces.RenderHTML(stdout, tr)
	default:
		fmt.Fprintf(stderr, "bkcheck trace render: --format must be text, mermaid, dot or html (got %q)\n", *format)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck trace render: %v\n", err)
		return exitError
	}
	return exitOK
}

// checkResult is the part of `bkcheck check --json`'s result line that the
// commands running checks in-process (regress, sweep, guarantees) read.
type checkResult struct {
	Status    string  `json:"status"`
	Reason    string  `json:"reason"`
	Distinct  int64   `json:"distinct"`
	Depth     int     `json:"depth"`
	ElapsedS  float64 `json:"elapsed_s"`
	TraceFile string  `json:"trace_file"`
	Violation *struct {
		Invariant string `json:"invariant"`
		Length    int    `json:"length"`
		WalkSeed  uint64 `json:"walk_seed"` // simulate only
	} `json:"violation"`
}

// runCheckJSON runs `bkcheck check` in-process with --json added and
// returns its exit code, the decoded result line and its stderr.
func runCheckJSON(ctx context.Context, args []string) (code int, res checkResult, stderr string, err error) {
	return runJSON(ctx, "check", args)
}

// runJSON runs `bkcheck check` or `bkcheck simulate` in-process, as
// runCheckJSON describes.
func runJSON(ctx context.Context, sub string, args []string) (code int, res checkResult, stderr string, err error) {
	var out, errb bytes.Buffer
	code = run(ctx, append(append([]string{sub}, args...), "--json", "--progress", "1h"), &out, &errb)
	stderr = strings.TrimSpace(errb.String())
	if code == exitUsage || code == exitError {
		return code, res, stderr, nil
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		return code, res, stderr, fmt.Errorf("unreadable result line: %w", err)
	}
	return code, res, stderr, nil
}

// invariantAndLength names the violated property and the trace length, if any.
func (r checkResult) invariantAndLength() (string, int) {
	if r.Violation == nil {
		return "", 0
	}
	return r.Violation.Invariant, r.Violation.Length
}

// parseWithFile parses flags that may stand before or after one file
// argument, and returns that file ("" when absent).
func parseWithFile(fs *flag.FlagSet, args []string) (string, error) {
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	}
	return file, nil
}
