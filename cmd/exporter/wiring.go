package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/redact"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// maxFileBytes caps --file-max-bytes: see pipelineConfig.
const maxFileBytes = 1 << 30

// pipelineConfig checks every option and reports all problems at once.
func (r *runCmd) pipelineConfig(stdin io.Reader, logger *slog.Logger) (pipeline.Config, func(once bool) (source.Source, error), error) {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	cfg := pipeline.Config{
		MaxRejects: r.MaxRejects, HoldMaxRecords: r.HoldMaxRecords, HoldMaxBytes: r.HoldMaxBytes, HoldMaxAge: r.HoldMaxAge,
		ProgressEvery: r.ProgressEvery, Logger: logger, UploadWorkers: r.UploadWorkers, UploadQueueBytes: r.UploadQueueBytes, MaxBufferBytes: r.MaxBufferBytes,
	}

	if r.Pprof && r.MetricsAddr == "" {
		add("--pprof serves its profiles on --metrics-addr, which is not set: give --metrics-addr HOST:PORT too, or drop --pprof")
	}
	if r.Schedule != "" && r.Once {
		add("--schedule and --once exclude each other: a schedule runs one --once drain per tick")
	}
	// Checked here, not only when the run gets to them, so that
	// validate reports them too.
	for _, s := range [][2]string{{"--schedule", r.Schedule}, {"--maintain-schedule", r.MaintainSchedule}} {
		if _, err := cronParser.Parse(s[1]); s[1] != "" && err != nil {
			add("%s: %v (want a cron schedule: five fields, minute first, such as '*/5 * * * *', or a descriptor such as @hourly)", s[0], err)
		}
	}
	if _, err := time.LoadLocation(r.ScheduleTimezone); err != nil {
		add("--schedule-timezone: %v (want an IANA zone name such as Europe/Paris, or UTC)", err)
	}
	if r.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(r.MetricsAddr); err != nil {
			add("--metrics-addr: %v (want HOST:PORT, or :PORT for every interface)", err)
		}
	}
	for _, p := range [][2]string{{"--cpu-profile", r.CPUProfile}, {"--mem-profile", r.MemProfile}} {
		if p[1] == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(p[1])); err != nil || !fi.IsDir() {
			add("%s: the folder of %s does not exist", p[0], p[1])
		}
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
	if r.FileMaxBytes > maxFileBytes {
		// A column of a file holds its values in one Arrow array and
		// its pages carry 32-bit sizes: past 2 GiB they would wrap.
		add("--file-max-bytes %d is above %d (1 GiB): a file's columns must stay within Arrow's and Parquet's 32-bit sizes; lower it", r.FileMaxBytes, int64(maxFileBytes))
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

	if r.catalogFlags.given() {
		cc, err := r.catalogConfig(cfg.Store)
		if err != nil {
			add("%v", err)
		}
		cfg.Catalog = cc
	}
	if r.MaintainSchedule != "" {
		if !r.catalogFlags.given() {
			add("--maintain-schedule: maintenance needs the Iceberg catalog the tables are published through: give --catalog too")
		}
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
		if slices.Contains(paths, "") {
			return nil, errors.New("file: needs the paths of the input files, separated by commas (file:./cdc.jsonl or file:a.jsonl,b.jsonl.gz), and none of them empty")
		}
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
		kc.ReadUncommitted = r.KafkaIsolation == "read_uncommitted"
		kc.SessionTimeout, kc.RebalanceTimeout, kc.JoinTimeout = r.KafkaSessionTimeout, r.KafkaRebalanceTimeout, r.KafkaJoinTimeout
		kc.DrainTimeout = r.KafkaDrainTimeout
		kc.TopicPattern, kc.MetadataRefresh = r.KafkaTopicPattern, r.KafkaMetadataRefresh
		if kc.Dialer, err = source.NewDialer(r.dialerConfig()); err != nil {
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

// redactSource drops the user information of the URL and anything after
// '?' but the group, so that no secret put in a URL reaches the logs.
func redactSource(spec string) string {
	base, query, ok := strings.Cut(redact.String(spec), "?")
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
	cfg, err := r.storeConfig(logger)
	if err != nil {
		return nil, err
	}
	cfg.MustExist = true
	st, err := store.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkSink(ctx, st); err != nil {
		return nil, err
	}
	return st, nil
}

func (r *sinkFlags) openSink(logger *slog.Logger) (sink, error) {
	cfg, err := r.storeConfig(logger)
	if err != nil {
		return nil, err
	}
	return store.Open(context.Background(), cfg)
}

// catalogConfig is the Iceberg catalog the --catalog flags describe for
// a run: its partition spec follows the layout's.
func (r *runCmd) catalogConfig(st pipeline.Store) (*tables.Config, error) {
	partitioning := tables.ByDay
	if r.PartitionBy == "hour" {
		partitioning = tables.ByHour
	}
	if r.PartitionTime == "processing" {
		// A file's folder then says when it was written, and its rows'
		// op_ts may span days: Iceberg requires every row of a file to
		// fall in the file's partition.
		partitioning = tables.Unpartitioned
	}
	return r.catalogFlags.config(st, partitioning)
}

// given tells whether any catalog flag is set.
func (f *catalogFlags) given() bool {
	return f.Catalog != "" || f.CatalogURI != "" || f.CatalogWarehouse != "" || len(f.CatalogProperty) > 0 || f.CatalogNamespace != ""
}

// config is the Iceberg catalog the --catalog flags describe; st is the
// sink (nil when it is unusable), whose folder holds the hadoop and sql
// catalogs' metadata by default.
func (f *catalogFlags) config(st pipeline.Store, partitioning tables.Partitioning) (*tables.Config, error) {
	if f.Catalog == "" {
		return nil, errors.New("--catalog-uri, --catalog-warehouse, --catalog-property and --catalog-namespace configure the Iceberg catalog that --catalog selects, which is not set: give --catalog hadoop, sql, rest or glue too, or drop them")
	}
	cfg := tables.Config{Kind: tables.Kind(f.Catalog), URI: f.CatalogURI, Warehouse: f.CatalogWarehouse,
		Properties: f.CatalogProperty, Namespace: f.CatalogNamespace, ExporterVersion: exporterVersion(),
		Partitioning: partitioning}
	if cfg.Warehouse == "" && st != nil && (cfg.Kind == tables.Hadoop || cfg.Kind == tables.SQL) {
		cfg.Warehouse = st.String() + "/" + icebergFolder
	}
	if err := cfg.Validate(); err != nil {
		// One line, under the flag of its first problem.
		return &cfg, errors.New("--" + strings.TrimPrefix(err.Error(), "catalog config: "))
	}
	return &cfg, nil
}

// readConfig is config for the commands that read the tables: the
// catalog must be the lake's (pipeline.CheckPublishedTo), and a SQLite
// catalog must exist; opened, a mistyped path would become a new empty
// catalog, whose tables the command would report missing.
func (f *catalogFlags) readConfig(ctx context.Context, st pipeline.Store) (*tables.Config, error) {
	cfg, err := f.config(st, tables.ByDay)
	if err != nil {
		return nil, err
	}
	if err := pipeline.CheckPublishedTo(ctx, st, cfg); err != nil {
		return nil, err
	}
	if path, ok := cfg.SQLiteFile(); ok {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("--catalog-uri: the SQLite catalog %s: %w: give the file the runs published the tables to", path, err)
		}
	}
	return cfg, nil
}

// icebergFolder is the sink's folder of the catalogs' metadata by
// default: no table is named with a leading underscore, so no data
// folder is inside it.
const icebergFolder = "_iceberg"

// exporterVersion is the module version the binary was built from, for
// the Iceberg tables' properties.
func exporterVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
