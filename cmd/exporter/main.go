// Command exporter turns CDC streams (Oracle GoldenGate Data Streams JSON)
// into Parquet files partitioned by table, schema version and date.
//
// The files: main.go parses the command line and dispatches; flags.go
// declares the flags and turns them into the plain configs of source and
// store; wiring.go checks the run's options together and builds the
// pipeline's config, the source and the store; runcmd.go runs, drains and
// schedules; server.go serves metrics, health and pprof; output.go holds
// what is printed for people (summary, errors: credentials redacted,
// control characters escaped) and the logger; validate.go, inspect.go,
// rebuild.go, scan.go, maintain.go and config.go are the validate,
// tables/schema/views, checkpoint rebuild, Iceberg scan, table maintenance
// and config-file parts.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runContext(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is runContext without a way to stop it, for tests of runs that end
// by themselves.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}

func newParser(c *cli, stdout, stderr io.Writer, exit func(int), extra ...kong.Option) (*kong.Kong, error) {
	opts := append([]kong.Option{
		kong.Name("exporter"),
		kong.Description("Export CDC streams to Parquet files partitioned by table, schema version and date."),
		kong.Configuration(loadYAMLConfig),
		kong.DefaultEnvars("EXPORTER"),
		kong.Writers(stdout, stderr),
		kong.Exit(exit),
		kong.UsageOnError(),
	}, extra...)
	return kong.New(c, opts...)
}

// runContext runs the command line; cancelling ctx is a SIGTERM.
func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if rest, ok := validateArgs(args); ok {
		// validate parses the run's configuration itself: parsing it
		// whole would stop at its first problem.
		return (&validateCmd{}).run(rest, stdout, stderr)
	}
	var c cli
	exitCode := -1
	parser, err := newParser(&c, stdout, stderr, func(code int) { exitCode = code })
	if err != nil {
		printErr(stderr, "exporter:", err)
		return exitFailure
	}
	kctx, err := parser.Parse(args)
	if exitCode >= 0 {
		return exitCode // --help
	}
	if err != nil {
		printErr(stderr, "exporter:", err)
		return exitUsage
	}
	logger := newLogger(stderr, "auto", "warn")
	var cmdErr error
	switch kctx.Command() {
	case "run":
		return c.Run.execute(ctx, stdin, stdout, stderr)
	case "tables":
		cmdErr = c.Tables.run(ctx, stdout, logger)
	case "schema <table>":
		cmdErr = c.Schema.run(ctx, stdout, logger)
	case "views":
		cmdErr = c.Views.run(ctx, stdout, logger)
	case "scan <table>":
		cmdErr = c.Scan.run(ctx, stdout, logger)
	case "maintain":
		return c.Maintain.run(ctx, stdout, stderr)
	case "checkpoint rebuild":
		cmdErr = c.Checkpoint.Rebuild.run(ctx, stdout, logger)
	default:
		printErr(stderr, "exporter: unknown command", kctx.Command())
		return exitUsage
	}
	if cmdErr != nil {
		printErr(stderr, "exporter:", cmdErr)
		return exitFailure
	}
	return exitOK
}
