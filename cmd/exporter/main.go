// Command exporter turns CDC streams (Oracle GoldenGate Data Streams JSON)
// into Parquet files partitioned by table, schema version and date.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/metrics"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
	"github.com/robfig/cron/v3"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

type cli struct {
	Config   kong.ConfigFlag `help:"YAML config file; its keys are the long flag names." type:"existingfile" env:"EXPORTER_CONFIG"`
	Run      runCmd          `cmd:"" help:"Export CDC records to Parquet."`
	Tables   tablesCmd       `cmd:"" help:"List the tables of a lake: schema versions, files, rows, last position."`
	Schema   schemaCmd       `cmd:"" help:"Show a table's Arrow schema and its DDL history."`
	Validate validateCmd     `cmd:"" help:"Check the configuration run would use (config file, EXPORTER_* environment, run flags) and report every problem at once, with its key, variable or flag."`
	Views    viewsCmd        `cmd:"" help:"Print SQL creating a view per table over all its schema versions, and a current-state view per table."`
}

// sinkFlags select and configure the sink; every command that reads or
// writes the lake takes them.
type sinkFlags struct {
	Sink string `help:"Where files go: file://DIR or s3://BUCKET/PREFIX." default:"file://./lake"`

	S3Endpoint          string        `name:"s3-endpoint" env:"EXPORTER_S3_ENDPOINT" help:"S3 endpoint URL for MinIO, Ceph and others (default: AWS, or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL)."`
	S3Region            string        `name:"s3-region" env:"EXPORTER_S3_REGION" help:"S3 region (default: AWS_REGION or the shared config, else us-east-1)."`
	S3PathStyle         string        `name:"s3-path-style" env:"EXPORTER_S3_PATH_STYLE" help:"Path-style addressing: auto (on exactly when a custom endpoint is set), true or false." default:"auto" enum:"auto,true,false"`
	S3AccessKeyID       string        `name:"s3-access-key-id" env:"EXPORTER_S3_ACCESS_KEY_ID" help:"Static access key (default: the standard AWS credential chain)."`
	S3SecretAccessKey   string        `name:"s3-secret-access-key" env:"EXPORTER_S3_SECRET_ACCESS_KEY" help:"Static secret key; prefer the environment or a secret file over the command line."`
	S3CABundle          string        `name:"s3-ca-bundle" env:"EXPORTER_S3_CA_BUNDLE" help:"PEM file of CAs to trust for the S3 endpoint." type:"existingfile"`
	S3PartSize          int64         `name:"s3-part-size" env:"EXPORTER_S3_PART_SIZE" help:"Multipart upload part size in bytes (at least 5 MiB)." default:"16777216"`
	S3MultipartAbove    int64         `name:"s3-multipart-above" env:"EXPORTER_S3_MULTIPART_ABOVE" help:"Upload files larger than this in parts." default:"33554432"`
	S3UploadConcurrency int           `name:"s3-upload-concurrency" env:"EXPORTER_S3_UPLOAD_CONCURRENCY" help:"Parts of one file uploaded at once." default:"4"`
	S3SSE               string        `name:"s3-sse" env:"EXPORTER_S3_SSE" help:"Server-side encryption: none, AES256 (SSE-S3) or aws:kms (SSE-KMS)." default:"none" enum:"none,AES256,aws:kms"`
	S3SSEKMSKeyID       string        `name:"s3-sse-kms-key-id" env:"EXPORTER_S3_SSE_KMS_KEY_ID" help:"KMS key id for --s3-sse aws:kms."`
	S3StorageClass      string        `name:"s3-storage-class" env:"EXPORTER_S3_STORAGE_CLASS" help:"Storage class of written objects (default: the bucket's)."`
	S3RequestTimeout    time.Duration `name:"s3-request-timeout" env:"EXPORTER_S3_REQUEST_TIMEOUT" help:"Timeout of one S3 request attempt." default:"2m"`
	S3RetryFor          time.Duration `name:"s3-retry-for" env:"EXPORTER_S3_RETRY_FOR" help:"How long one S3 operation is retried through throttling, 5xx and network errors before the run fails." default:"15m"`
}

type runCmd struct {
	sinkFlags `embed:""`

	Source string `help:"Where records come from: file:PATH[,PATH...] (gzip read transparently; - is stdin), stdin (a new stream each run), stdin:NAME (a stream that resumes by name, exactly once, when fed again), or kafka://HOST:PORT[,HOST:PORT]/TOPIC[,TOPIC]?group=NAME." required:""`
	Format string `help:"Input format: goldengate, qlik, or auto (chosen per message, so both can share a stream)." default:"auto" enum:"auto,goldengate,qlik"`
	Once   bool   `help:"Drain the source (Kafka: up to the high watermark seen at start), flush, checkpoint, commit and exit. File sources always end at EOF."`

	Schedule         string `help:"Cron schedule (5 fields, or 6 with seconds first, or @every 1h): keep running and do one --once drain per tick, never two at once."`
	ScheduleTimezone string `help:"Time zone of --schedule." default:"UTC"`

	KafkaClientID         string        `name:"kafka-client-id" help:"Kafka client id." default:"lakehouse-exporter"`
	KafkaTopicPattern     string        `name:"kafka-topic-pattern" help:"Also consume every topic whose whole name matches this regular expression (Go RE2 syntax), now and created later; internal topics (__...) never match. With it the topics in --source may be left out: kafka://HOST:PORT/?group=NAME."`
	KafkaMetadataRefresh  time.Duration `name:"kafka-metadata-refresh" help:"How often the topics and their partition counts are read again when consuming continuously; new topics and partitions (and deleted topics) make the group rebalance with the new set." default:"30s"`
	KafkaStart            string        `name:"kafka-start" help:"Where a partition without committed offset starts: earliest or latest." default:"earliest" enum:"earliest,latest"`
	KafkaMinBytes         int           `name:"kafka-min-bytes" help:"Fetch at least this many bytes (or wait --kafka-max-wait)." default:"1"`
	KafkaMaxBytes         int           `name:"kafka-max-bytes" help:"Fetch at most this many bytes per request." default:"16777216"`
	KafkaMaxWait          time.Duration `name:"kafka-max-wait" help:"Longest a fetch waits for --kafka-min-bytes." default:"500ms"`
	KafkaRebalanceTimeout time.Duration `name:"kafka-rebalance-timeout" help:"How long a rebalance waits for members to rejoin; this instance flushes and checkpoints the partitions it gives up within it." default:"30s"`
	KafkaSessionTimeout   time.Duration `name:"kafka-session-timeout" help:"How long the group waits for a silent (crashed) member before moving its partitions." default:"10s"`
	KafkaJoinTimeout      time.Duration `name:"kafka-join-timeout" help:"With --once or --schedule, fail the drain when joining the consumer group keeps failing this long (unreachable brokers); 0 waits forever. Consuming continuously always waits." default:"60s"`
	KafkaTLS              bool          `name:"kafka-tls" help:"Connect to the brokers over TLS."`
	KafkaTLSCA            string        `name:"kafka-tls-ca" help:"PEM file of CAs to trust for the brokers." type:"existingfile"`
	KafkaTLSInsecure      bool          `name:"kafka-tls-insecure" help:"Do not verify the brokers' certificates (tests only)."`
	KafkaSASL             string        `name:"kafka-sasl" help:"SASL mechanism: none, plain, scram-sha-256 or scram-sha-512." default:"none" enum:"none,plain,scram-sha-256,scram-sha-512"`
	KafkaUsername         string        `name:"kafka-username" help:"SASL user name."`
	KafkaPassword         string        `name:"kafka-password" help:"SASL password; prefer the environment (EXPORTER_KAFKA_PASSWORD)."`

	MaxRejects     int   `help:"Fail the run (exit 1) once more than N records were rejected; -1 means no limit." default:"-1"`
	MaxRecordBytes int   `help:"Largest accepted record; longer ones go to the dead-letter output." default:"16777216"`
	FileMaxRows    int   `help:"Roll a data file at this many rows." default:"1000000"`
	FileMaxBytes   int64 `help:"Roll a data file at this many buffered bytes." default:"134217728"`

	FileMaxAge       time.Duration `help:"Roll a data file this long after its first row." default:"5m"`
	RowGroupRows     int64         `help:"Rows per Parquet row group." default:"131072"`
	Compression      string        `help:"Parquet compression: zstd, snappy, gzip or none." default:"zstd" enum:"zstd,snappy,gzip,none"`
	CompressionLevel int           `help:"Codec level (zstd 1-22, gzip 1-9); 0 picks zstd 1, measured fastest for about 1% more bytes than 3." default:"0"`
	ParquetEncoder   string        `help:"Who writes Parquet pages: lean (the exporter's own page encoder, fastest) or arrow (arrow-go's pqarrow for everything). Both write the same schema and values." default:"lean" enum:"lean,arrow"`
	IntEncoding      string        `help:"How 64-bit integer and timestamp columns without a dictionary are written: delta (DELTA_BINARY_PACKED: smaller, faster) or plain (for Spark before 3.3, whose vectorized reader lacks delta)." default:"delta" enum:"delta,plain"`
	PartitionBy      string        `help:"Time partition granularity: day (dt=) or hour (dt=/hr=)." default:"day" enum:"day,hour"`
	PartitionTime    string        `help:"Time that picks the partition: op_ts (UTC date of the change) or processing." default:"op_ts" enum:"op_ts,processing"`
	BeforeImage      bool          `help:"Keep the before image as a struct column (before_image)." default:"true" negatable:""`

	TypeHint map[string]string `help:"Column type hint TABLE:COLUMN=TYPE (TYPE: int64, float64, decimal(p,s), timestamp, date, string, binary, boolean; TABLE may be *). Repeatable." mapsep:";"`

	GGQualTableField string `name:"gg-qual-table-field" help:"GoldenGate field holding the table name." default:"qual_table"`
	GGOpTypeField    string `name:"gg-op-type-field" help:"GoldenGate field holding the operation." default:"op_type"`
	GGOpTSField      string `name:"gg-op-ts-field" help:"GoldenGate field holding the operation timestamp." default:"op_ts"`
	GGXIDField       string `name:"gg-xid-field" help:"GoldenGate field holding the transaction id." default:"xid"`
	GGPosField       string `name:"gg-pos-field" help:"GoldenGate field holding the position." default:"pos"`
	GGBeforeField    string `name:"gg-before-field" help:"GoldenGate field holding the before image." default:"before"`
	GGAfterField     string `name:"gg-after-field" help:"GoldenGate field holding the after image." default:"after"`
	GGOpInsert       string `name:"gg-op-insert" help:"GoldenGate op string for inserts." default:"INSERT"`
	GGOpUpdate       string `name:"gg-op-update" help:"GoldenGate op string for updates." default:"UPDATE"`
	GGOpDelete       string `name:"gg-op-delete" help:"GoldenGate op string for deletes." default:"DELETE"`
	GGOpUpsert       string `name:"gg-op-upsert" help:"GoldenGate op string for upserts." default:"UPSERT"`

	MaxBufferBytes   int64 `help:"Memory budget for the data: open table buffers, files being encoded and waiting for upload. Past 45% of it (the rest is headroom for decoding, encoding and the Go runtime) the largest buffers are flushed and reading waits for uploads; the Go heap is limited to it unless GOMEMLIMIT is set." default:"268435456"`
	DecodeWorkers    int   `help:"Goroutines decoding records ahead, in parallel (0: one per CPU; -1: decode on the main goroutine)." default:"0"`
	UploadWorkers    int   `help:"Files encoded and uploaded at once." default:"4"`
	UploadQueueBytes int64 `help:"Most bytes of finished files waiting for upload before reading pauses." default:"268435456"`

	QlikTable        string `help:"Table name for Qlik data messages that carry no schema/table."`
	QlikInferColumns bool   `help:"Let Qlik data messages define a table's columns (as text) when no metadata message is available; new columns open a new schema version."`

	HoldMaxRecords int           `help:"Most DML records held while tables wait for metadata." default:"100000"`
	HoldMaxBytes   int64         `help:"Most bytes of DML held while tables wait for metadata." default:"67108864"`
	HoldMaxAge     time.Duration `help:"Longest a DML record waits for its table's metadata." default:"5m"`

	MetricsAddr string `help:"Serve Prometheus /metrics, /healthz and /readyz on HOST:PORT (off when empty)."`
	Pprof       bool   `help:"Also serve Go's /debug/pprof profiles on --metrics-addr (heap, CPU, goroutines)."`

	LogFormat     string        `help:"Log format: auto (text on a terminal, JSON otherwise), text or json." default:"auto" enum:"auto,text,json"`
	LogLevel      string        `help:"Log level: debug, info, warn or error." default:"info" enum:"debug,info,warn,error"`
	ProgressEvery time.Duration `help:"Log progress at this interval (0 turns it off)." default:"5s"`
	CPUProfile    string        `name:"cpu-profile" help:"Write a Go CPU profile of the whole run to this file (for go tool pprof)." type:"path"`
	MemProfile    string        `name:"mem-profile" help:"Write a Go allocation profile of the whole run to this file when it ends (for go tool pprof -sample_index=alloc_space)." type:"path"`

	stall *stallWatch // the readiness probe's view of the loop, with --metrics-addr
}

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
		fmt.Fprintln(stderr, "exporter:", err)
		return exitFailure
	}
	kctx, err := parser.Parse(args)
	if exitCode >= 0 {
		return exitCode // --help
	}
	if err != nil {
		fmt.Fprintln(stderr, "exporter:", err)
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
	default:
		fmt.Fprintln(stderr, "exporter: unknown command", kctx.Command())
		return exitUsage
	}
	if cmdErr != nil {
		fmt.Fprintln(stderr, "exporter:", cmdErr)
		return exitFailure
	}
	return exitOK
}

func (r *runCmd) execute(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	logger := newLogger(stderr, r.LogFormat, r.LogLevel)
	cfg, openSrc, err := r.pipelineConfig(stdin, logger)
	if ue := (unusableSinkError{}); errors.As(err, &ue) {
		fmt.Fprintln(stderr, "exporter: --sink unusable:", err)
		return exitFailure
	}
	if err != nil {
		fmt.Fprintln(stderr, "exporter: bad configuration:", err)
		return exitUsage
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The budget bounds the data; without a limit the Go collector
		// lets garbage grow the heap to twice what is live, so the
		// process would use twice the budget. With it, the collector
		// works harder near the budget instead (measured: about 8% more
		// time on the benchmark stream).
		budget := r.MaxBufferBytes
		if budget <= 0 {
			budget = 256 << 20
		}
		debug.SetMemoryLimit(max(budget, 64<<20))
	}
	if r.CPUProfile != "" {
		f, err := os.Create(r.CPUProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(stderr, "exporter: --cpu-profile:", err)
			return exitUsage
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if r.MemProfile != "" {
		f, err := os.Create(r.MemProfile)
		if err != nil {
			fmt.Fprintln(stderr, "exporter: --mem-profile:", err)
			return exitUsage
		}
		defer func() {
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				logger.Error("cannot write the allocation profile", "file", r.MemProfile, "error", err)
			}
			f.Close()
		}()
	}
	if err := checkSink(ctx, cfg.Store); err != nil {
		logger.Error("sink is not usable", "sink", cfg.Store.String(), "error", err)
		fmt.Fprintln(stderr, "exporter:", err)
		return exitFailure
	}
	if r.MetricsAddr != "" {
		stopServer, err := r.serveMetrics(ctx, &cfg, logger)
		if err != nil {
			fmt.Fprintln(stderr, "exporter: --metrics-addr:", err)
			return exitUsage
		}
		defer stopServer()
	}
	if r.Schedule != "" {
		return r.scheduled(ctx, cfg, openSrc, logger, stdout, stderr)
	}
	if err := r.drain(ctx, cfg, openSrc, r.Once, logger, stdout); err != nil {
		fmt.Fprintln(stderr, "exporter:", err)
		return exitFailure
	}
	return exitOK
}

// stallAfter is how long a running drain may go without a loop turn
// before /readyz reports it stalled (an upload blocked on the store, say).
const stallAfter = 2 * time.Minute

// stallWatch tells a stalled pipeline by its count of loop turns: one
// that has not changed for stallAfter while a drain runs.
type stallWatch struct {
	turns *atomic.Int64
	now   func() time.Time

	mu      sync.Mutex
	running bool
	started int64     // the count when the drain started
	seen    int64     // the count at the last change seen
	since   time.Time // when it was seen to change
}

func (w *stallWatch) draining(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.turns.Load()
	w.running, w.started, w.seen, w.since = on, n, n, w.now()
}

func (w *stallWatch) check() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	// Before its first turn the loop is starting (joining the group,
	// recovering), which may take longer than stallAfter.
	if n := w.turns.Load(); !w.running || n != w.seen || n == w.started {
		w.seen, w.since = n, now
		return nil
	}
	if idle := now.Sub(w.since); idle > stallAfter {
		return fmt.Errorf("pipeline stalled: no progress for %s", idle.Round(time.Second))
	}
	return nil
}

// serveMetrics starts the metrics and health listener and wires the
// pipeline's observer to it.
func (r *runCmd) serveMetrics(ctx context.Context, cfg *pipeline.Config, logger *slog.Logger) (func(), error) {
	m := metrics.New()
	cfg.Observer = m
	cfg.Activity = new(atomic.Int64)
	if s3, ok := cfg.Store.(*store.S3); ok {
		s3.OnRetry(m.StorageRetry)
	}
	r.stall = &stallWatch{turns: cfg.Activity, now: time.Now}
	probes := []metrics.Probe{func(ctx context.Context) error { return r.stall.check() }}
	if c, ok := cfg.Store.(checker); ok {
		probes = append(probes, func(ctx context.Context) error { return c.Check(ctx) })
	}
	ln, err := net.Listen("tcp", r.MetricsAddr)
	if err != nil {
		return nil, err
	}
	handler := m.Handler(probes...)
	if r.Pprof {
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		mux.HandleFunc("/debug/pprof/", httppprof.Index)
		mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
		handler = mux
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			logger.Error("metrics listener failed", "error", err)
		}
	}()
	logger.Info("serving metrics and health", "addr", ln.Addr().String())
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
	}, nil
}

// drain runs the pipeline once over a freshly opened source. Shutdown on
// SIGINT/SIGTERM, in order: stop fetching, flush every buffer, upload,
// write the checkpoints, commit the Kafka offsets, leave the group.
func (r *runCmd) drain(ctx context.Context, cfg pipeline.Config, openSrc func(once bool) (source.Source, error), once bool, logger *slog.Logger, stdout io.Writer) error {
	src, err := openSrc(once)
	if err != nil {
		return err
	}
	defer src.Close()
	cfg.Source = src
	if r.stall != nil {
		r.stall.draining(true)
		defer r.stall.draining(false) // between drains nothing can stall
	}
	logger.Info("export starting", "source", redactSource(r.Source), "sink", cfg.Store.String(), "format", r.Format, "once", once)
	sum, err := pipeline.Run(ctx, cfg)
	printSummary(stdout, sum)
	if err != nil {
		logger.Error("export failed", "error", err)
		return err
	}
	logger.Info("export finished", "records", sum.Records, "rejected", sum.Rejected, "files", sum.Files, "seconds", sum.Elapsed.Seconds())
	return nil
}

// scheduled keeps the process up and drains the source on every tick of
// the cron schedule; a tick that comes while a drain still runs is skipped.
func (r *runCmd) scheduled(ctx context.Context, cfg pipeline.Config, openSrc func(bool) (source.Source, error), logger *slog.Logger, stdout, stderr io.Writer) int {
	loc, err := time.LoadLocation(r.ScheduleTimezone)
	if err != nil {
		fmt.Fprintln(stderr, "exporter: --schedule-timezone:", err)
		return exitUsage
	}
	parser := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	sched, err := parser.Parse(r.Schedule)
	if err != nil {
		fmt.Fprintln(stderr, "exporter: --schedule:", err)
		return exitUsage
	}
	c := cron.New(cron.WithLocation(loc), cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)))
	c.Schedule(sched, cron.FuncJob(func() {
		if ctx.Err() != nil {
			return
		}
		if err := r.drain(ctx, cfg, openSrc, true, logger, stdout); err != nil {
			logger.Error("scheduled drain failed; the next tick tries again", "error", err)
		}
	}))
	logger.Info("waiting for the schedule", "schedule", r.Schedule, "timezone", loc.String(), "next", sched.Next(time.Now().In(loc)))
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done() // let a running drain finish its shutdown
	return exitOK
}

// pipelineConfig checks every option and reports all problems at once.
func (r *runCmd) pipelineConfig(stdin io.Reader, logger *slog.Logger) (pipeline.Config, func(once bool) (source.Source, error), error) {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	cfg := pipeline.Config{
		MaxRejects: r.MaxRejects, HoldMaxRecords: r.HoldMaxRecords, HoldMaxBytes: r.HoldMaxBytes, HoldMaxAge: r.HoldMaxAge,
		ProgressEvery: r.ProgressEvery, Logger: logger, UploadWorkers: r.UploadWorkers, UploadQueueBytes: r.UploadQueueBytes, MaxBufferBytes: r.MaxBufferBytes,
	}

	if r.Schedule != "" && r.Once {
		add("--schedule and --once exclude each other: a schedule runs one --once drain per tick")
	}
	names := cdc.GoldenGateNames{QualTable: r.GGQualTableField, OpType: r.GGOpTypeField, OpTS: r.GGOpTSField, XID: r.GGXIDField,
		Pos: r.GGPosField, Before: r.GGBeforeField, After: r.GGAfterField, Insert: r.GGOpInsert, Update: r.GGOpUpdate,
		Delete: r.GGOpDelete, Upsert: r.GGOpUpsert}
	dec, err := cdc.NewGoldenGate(names)
	if err != nil {
		add("%v", err)
	}
	newDecoder := func() pipeline.Decoder {
		gg, _ := cdc.NewGoldenGate(names) // names were checked above
		qlik := cdc.NewQlik(cdc.QlikOptions{DefaultTable: r.QlikTable})
		switch r.Format {
		case "goldengate":
			return gg
		case "qlik":
			return qlik
		}
		return &cdc.Auto{GoldenGate: gg, Qlik: qlik}
	}
	if dec != nil {
		cfg.Decoder = newDecoder()
		cfg.NewDecoder = newDecoder
		cfg.DecodeWorkers = r.DecodeWorkers
		if cfg.DecodeWorkers == 0 {
			cfg.DecodeWorkers = runtime.GOMAXPROCS(0)
		}
	}
	cfg.InferColumns = r.QlikInferColumns
	hints, err := arrowschema.ParseHints(r.TypeHint)
	if err != nil {
		add("--type-hint: %v", err)
	}
	cfg.Schema = arrowschema.Options{Hints: hints, BeforeImage: r.BeforeImage,
		SchemaFields: arrowschema.SchemaFields{After: r.GGAfterField, Before: r.GGBeforeField, QualTable: r.GGQualTableField}}
	gran, err := partition.ParseGranularity(r.PartitionBy)
	if err != nil {
		add("--partition-by: %v", err)
	}
	if _, err := writer.ParseCompression(r.Compression); err != nil {
		add("--compression: %v", err)
	}
	if err := writer.CheckCompressionLevel(r.Compression, r.CompressionLevel); err != nil {
		add("--compression-level: %v", err)
	}
	if r.FileMaxRows <= 0 || r.FileMaxBytes <= 0 || r.FileMaxAge <= 0 || r.RowGroupRows <= 0 {
		add("--file-max-rows, --file-max-bytes, --file-max-age and --row-group-rows must be positive")
	}
	cfg.Writer = writer.Config{MaxRows: r.FileMaxRows, MaxBytes: r.FileMaxBytes, MaxAge: r.FileMaxAge, RowGroupRows: r.RowGroupRows,
		Compression: r.Compression, CompressionLevel: r.CompressionLevel, Encoder: r.ParquetEncoder,
		IntEncoding: r.IntEncoding, Granularity: gran, ProcessingTime: r.PartitionTime == "processing"}

	st, err := r.openSink(logger)
	var pathErr *fs.PathError
	var unusable error
	switch {
	case errors.As(err, &pathErr):
		// A well-formed sink this machine cannot write (a file in the
		// way, no permission): a runtime failure, not bad usage.
		unusable = err
	case err != nil:
		add("--sink: %v", err)
	default:
		cfg.Store = st
	}

	openSrc, err := r.sourceOpener(stdin, logger)
	if err != nil {
		add("--source: %v", err)
	}
	if len(problems) > 0 {
		if unusable != nil {
			add("--sink: %v", unusable)
		}
		return cfg, nil, errors.New(strings.Join(problems, "\n  "))
	}
	if unusable != nil {
		return cfg, nil, unusableSinkError{unusable}
	}
	return cfg, openSrc, nil
}

// unusableSinkError is a sink that is well formed but cannot be used here.
type unusableSinkError struct{ err error }

func (e unusableSinkError) Error() string { return e.err.Error() }
func (e unusableSinkError) Unwrap() error { return e.err }

// sourceOpener checks the source settings and returns how to open the
// source for one drain.
func (r *runCmd) sourceOpener(stdin io.Reader, logger *slog.Logger) (func(once bool) (source.Source, error), error) {
	spec := r.Source
	switch {
	case spec == "stdin" || spec == "-":
		return func(bool) (source.Source, error) { return source.NewFiles([]string{"-"}, r.MaxRecordBytes, stdin) }, nil
	case strings.HasPrefix(spec, "stdin:"):
		name := strings.TrimPrefix(spec, "stdin:")
		if _, err := source.NewNamedStdin(name, r.MaxRecordBytes, stdin); err != nil {
			return nil, err
		}
		return func(bool) (source.Source, error) { return source.NewNamedStdin(name, r.MaxRecordBytes, stdin) }, nil
	case strings.HasPrefix(spec, "file:"):
		paths := strings.Split(strings.TrimPrefix(strings.TrimPrefix(spec, "file:"), "//"), ",")
		if _, err := source.NewFiles(paths, r.MaxRecordBytes, stdin); err != nil {
			return nil, err
		}
		return func(bool) (source.Source, error) { return source.NewFiles(paths, r.MaxRecordBytes, stdin) }, nil
	case strings.HasPrefix(spec, "kafka://"):
		kc, err := source.ParseKafkaURL(spec)
		if err != nil {
			return nil, err
		}
		if kc.ClientID == "" {
			kc.ClientID = r.KafkaClientID
		}
		if kc.StartAt == "" {
			kc.StartAt = r.KafkaStart
		}
		kc.MinBytes, kc.MaxBytes, kc.MaxWait, kc.Logger = r.KafkaMinBytes, r.KafkaMaxBytes, r.KafkaMaxWait, logger
		kc.SessionTimeout, kc.RebalanceTimeout, kc.JoinTimeout = r.KafkaSessionTimeout, r.KafkaRebalanceTimeout, r.KafkaJoinTimeout
		kc.TopicPattern, kc.MetadataRefresh = r.KafkaTopicPattern, r.KafkaMetadataRefresh
		if kc.Dialer, err = r.kafkaDialer(); err != nil {
			return nil, err
		}
		if err := kc.Validate(); err != nil {
			return nil, err
		}
		return func(once bool) (source.Source, error) {
			c := kc
			c.Once = once
			return source.NewKafka(c)
		}, nil
	}
	return nil, fmt.Errorf("%q is not a source (want %s)", spec, sourceForms)
}

// sourceForms are the values --source takes.
const sourceForms = "file:PATH[,PATH...], stdin, stdin:NAME or kafka://HOST:PORT[,HOST:PORT]/TOPIC[,TOPIC]?group=NAME"

// missingSource says where a run's source can be given, and in what form.
const missingSource = "give where records come from as --source, as source: in the config file or as EXPORTER_SOURCE; it takes " +
	sourceForms + " (e.g. file:./cdc.jsonl or kafka://broker:9092/orders?group=lake)"

// Validate runs before kong's own check of required flags, whose message
// names the flag only.
func (r *runCmd) Validate() error {
	if r.Source == "" {
		return errors.New("--source is missing: " + missingSource)
	}
	return nil
}

func (r *runCmd) kafkaDialer() (*kafka.Dialer, error) {
	d := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true}
	if r.KafkaTLS || r.KafkaTLSCA != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: r.KafkaTLSInsecure}
		if r.KafkaTLSCA != "" {
			pem, err := os.ReadFile(r.KafkaTLSCA)
			if err != nil {
				return nil, fmt.Errorf("--kafka-tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--kafka-tls-ca %s holds no PEM certificate", r.KafkaTLSCA)
			}
			tc.RootCAs = pool
		}
		d.TLS = tc
	}
	if r.KafkaSASL != "none" && (r.KafkaUsername == "" || r.KafkaPassword == "") {
		return nil, fmt.Errorf("--kafka-sasl %s needs --kafka-username and --kafka-password", r.KafkaSASL)
	}
	switch r.KafkaSASL {
	case "plain":
		d.SASLMechanism = plain.Mechanism{Username: r.KafkaUsername, Password: r.KafkaPassword}
	case "scram-sha-256", "scram-sha-512":
		algo := scram.SHA256
		if r.KafkaSASL == "scram-sha-512" {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, r.KafkaUsername, r.KafkaPassword)
		if err != nil {
			return nil, fmt.Errorf("--kafka-sasl: %w", err)
		}
		d.SASLMechanism = m
	}
	return d, nil
}

// redactSource drops anything after '?' but the group, so that no secret
// put in a URL reaches the logs.
func redactSource(spec string) string {
	base, query, ok := strings.Cut(spec, "?")
	if !ok {
		return spec
	}
	for _, kv := range strings.Split(query, "&") {
		if strings.HasPrefix(kv, "group=") {
			return base + "?" + kv
		}
	}
	return base
}

// sink is what the command needs from a store: the pipeline's needs plus
// an optional reachability check.
type sink interface {
	pipeline.Store
}

type checker interface {
	Check(ctx context.Context) error
}

// checkSink stops a command at once on a sink it cannot use (a missing
// bucket, missing or bad credentials, an endpoint that does not answer),
// with what to fix, instead of after --s3-retry-for of retries.
func checkSink(ctx context.Context, st sink) error {
	c, ok := st.(checker)
	if !ok {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.Check(cctx)
}

// openLake opens the sink for the commands that only read it: a local
// folder that does not exist is an error, not a new empty lake, and a
// store that cannot be used is one at once, as for run.
func (r *sinkFlags) openLake(ctx context.Context, logger *slog.Logger) (sink, error) {
	if u, err := url.Parse(r.Sink); err == nil && u.Scheme == "file" {
		dir := localDir(r.Sink, u)
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("sink folder %s: %w: check --sink (it names the folder a run wrote to)", dir, err)
		}
	}
	st, err := r.openSink(logger)
	if err != nil {
		return nil, err
	}
	if err := checkSink(ctx, st); err != nil {
		return nil, err
	}
	return st, nil
}

// localDir is the folder a file:// sink URL names.
func localDir(spec string, u *url.URL) string {
	if u.Host == "." || strings.HasPrefix(spec, "file://./") {
		return "." + u.Path
	}
	return u.Host + u.Path
}

func (r *sinkFlags) openSink(logger *slog.Logger) (sink, error) {
	spec := r.Sink
	u, err := url.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %v", spec, err)
	}
	switch u.Scheme {
	case "file":
		return store.NewLocal(localDir(spec, u))
	case "s3":
		cfg := store.S3Config{
			Bucket: u.Host, Prefix: strings.Trim(u.Path, "/"), Endpoint: r.S3Endpoint, Region: r.S3Region,
			AccessKeyID: r.S3AccessKeyID, SecretAccessKey: r.S3SecretAccessKey, CABundle: r.S3CABundle,
			PartSize: r.S3PartSize, MultipartAbove: r.S3MultipartAbove, UploadConcurrency: r.S3UploadConcurrency,
			SSEKMSKeyID: r.S3SSEKMSKeyID, StorageClass: r.S3StorageClass, RequestTimeout: r.S3RequestTimeout,
			RetryFor: r.S3RetryFor, Logger: logger,
		}
		if r.S3SSE != "none" {
			cfg.SSE = r.S3SSE
		}
		if r.S3PathStyle != "auto" {
			ps := r.S3PathStyle == "true"
			cfg.PathStyle = &ps
		}
		if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
			return nil, errors.New("--s3-access-key-id and --s3-secret-access-key go together")
		}
		return store.NewS3(context.Background(), cfg)
	}
	return nil, fmt.Errorf("%q is not a sink (want file://DIR or s3://BUCKET/PREFIX)", spec)
}

func newLogger(w io.Writer, format, level string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv}
	if format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				format = "text"
			}
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func printSummary(w io.Writer, s pipeline.Summary) {
	fmt.Fprintf(w, "records read:   %d\n", s.Records)
	if s.Skipped > 0 {
		fmt.Fprintf(w, "already durable (skipped): %d\n", s.Skipped)
	}
	tables := make([]string, 0, len(s.RowsByTable))
	for t := range s.RowsByTable {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		fmt.Fprintf(w, "rows written:   %-30s %d\n", t, s.RowsByTable[t])
	}
	fmt.Fprintf(w, "rejected:       %d", s.Rejected)
	if s.Rejected > 0 {
		var parts []string
		for r, n := range s.RejectedBy {
			parts = append(parts, fmt.Sprintf("%s=%d", r, n))
		}
		sort.Strings(parts)
		fmt.Fprintf(w, " (%s; see _dlq/)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "\nfiles:          %d\nbytes:          %d\nseconds:        %.2f\n", s.Files, s.Bytes, s.Elapsed.Seconds())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(w, "allocated:      %d bytes in %d objects (Go heap, whole process)\n", ms.TotalAlloc, ms.Mallocs)
}
