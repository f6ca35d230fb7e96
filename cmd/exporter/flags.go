package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/alecthomas/kong"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitInterrupted: a run whose source ends (files, stdin, a Kafka
	// --once drain) was stopped by a signal before that end; what it read
	// is durable, and running it again finishes the work exactly.
	exitInterrupted = 3
)

type cli struct {
	Config     kong.ConfigFlag `help:"YAML config file; its keys are the long flag names." type:"existingfile" env:"EXPORTER_CONFIG"`
	Run        runCmd          `cmd:"" help:"Export CDC records to Parquet."`
	Tables     tablesCmd       `cmd:"" help:"List the tables of a lake: schema versions, files, rows, last position."`
	Schema     schemaCmd       `cmd:"" help:"Show a table's Arrow schema and its DDL history."`
	Validate   validateCmd     `cmd:"" help:"Check the configuration run would use (config file, EXPORTER_* environment, run flags) and report every problem at once, with its key, variable or flag."`
	Views      viewsCmd        `cmd:"" help:"Print SQL creating a view per table over all its schema versions, and a current-state view per table; with --catalog, also views through the Iceberg catalog."`
	Scan       scanCmd         `cmd:"" help:"Read a table through the Iceberg catalog (--catalog ...) with iceberg-go's table scan and print its rows."`
	Checkpoint checkpointCmd   `cmd:"" help:"Repair progress records: checkpoint rebuild."`
	Maintain   maintainCmd     `cmd:"" help:"One maintenance pass over the Iceberg tables (--catalog ...): compact small files, expire old snapshots, remove orphan files; safe beside a running exporter."`
}

// sinkFlags select and configure the sink; every command that reads or
// writes the lake takes them.
type sinkFlags struct {
	Sink string `help:"Where files go: file://DIR or s3://BUCKET/PREFIX." default:"file://./lake"`

	S3Endpoint          string        `name:"s3-endpoint" env:"EXPORTER_S3_ENDPOINT" help:"S3 endpoint URL for MinIO, Ceph and others (default: AWS, or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL)."`
	S3Region            string        `name:"s3-region" env:"EXPORTER_S3_REGION" help:"S3 region (default: AWS_REGION or the shared config, else us-east-1)."`
	S3PathStyle         string        `name:"s3-path-style" env:"EXPORTER_S3_PATH_STYLE" help:"Path-style addressing: auto (on exactly when a custom endpoint is set), true or false." default:"auto" enum:"auto,true,false"`
	S3AccessKeyID       string        `name:"s3-access-key-id" env:"EXPORTER_S3_ACCESS_KEY_ID" help:"Static access key (default: the standard AWS credential chain)."`
	S3SecretAccessKey   string        `name:"s3-secret-access-key" env:"EXPORTER_S3_SECRET_ACCESS_KEY" help:"Static secret key; prefer EXPORTER_S3_SECRET_ACCESS_KEY or the AWS credential chain (a shared credentials file, an instance or pod role) over the command line, where other users of the machine can read it."`
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
	MaintainSchedule string `help:"With --catalog: also run a table maintenance pass in this process on each tick of this cron schedule (the --schedule forms, in --schedule-timezone), beside the export and never two at once, with exporter maintain's defaults: compact files under 128 MiB, expire snapshots older than 168h beyond the newest 10, remove orphans older than 24h. For other settings run exporter maintain as a job of its own."`

	KafkaClientID         string        `name:"kafka-client-id" help:"Kafka client id." default:"lakehouse-exporter"`
	KafkaTopicPattern     string        `name:"kafka-topic-pattern" help:"Also consume every topic whose whole name matches this regular expression (Go RE2 syntax), now and created later; internal topics (__...) never match. With it the topics in --source may be left out: kafka://HOST:PORT/?group=NAME."`
	KafkaMetadataRefresh  time.Duration `name:"kafka-metadata-refresh" help:"How often the topics and their partition counts are read again when consuming continuously; new topics and partitions (and deleted topics) make the group rebalance with the new set." default:"30s"`
	KafkaStart            string        `name:"kafka-start" help:"Where a partition without committed offset starts: earliest or latest." default:"earliest" enum:"earliest,latest"`
	KafkaMinBytes         int           `name:"kafka-min-bytes" help:"Fetch at least this many bytes (or wait --kafka-max-wait)." default:"1"`
	KafkaMaxBytes         int           `name:"kafka-max-bytes" help:"Fetch at most this many bytes per request." default:"16777216"`
	KafkaMaxWait          time.Duration `name:"kafka-max-wait" help:"Longest a fetch waits for --kafka-min-bytes." default:"500ms"`
	KafkaIsolation        string        `name:"kafka-isolation" help:"Which records of transactional producers are exported: read_committed (those of committed transactions; a partition is read up to its first open transaction) or read_uncommitted (also those of open and aborted transactions). Transaction markers are never exported." default:"read_committed" enum:"read_committed,read_uncommitted"`
	KafkaRebalanceTimeout time.Duration `name:"kafka-rebalance-timeout" help:"How long a rebalance waits for members to rejoin; this instance flushes and checkpoints the partitions it gives up within it." default:"30s"`
	KafkaSessionTimeout   time.Duration `name:"kafka-session-timeout" help:"How long the group waits for a silent (crashed) member before moving its partitions." default:"10s"`
	KafkaJoinTimeout      time.Duration `name:"kafka-join-timeout" help:"With --once or --schedule, fail the drain when joining the consumer group keeps failing this long (unreachable brokers); 0 waits forever. Consuming continuously always waits." default:"60s"`
	KafkaDrainTimeout     time.Duration `name:"kafka-drain-timeout" help:"With --once or --schedule, how long a drain that has read its own partitions waits for the others (held by another member: a crashed one until its session times out) to be committed or come to it, restarted by their progress; then it fails naming them. 0 waits forever." default:"2m"`
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

	catalogFlags `embed:""`

	MetricsAddr string `help:"Serve Prometheus /metrics, /healthz and /readyz on HOST:PORT (off when empty)."`
	Pprof       bool   `help:"Also serve Go's /debug/pprof profiles on --metrics-addr (heap, CPU, goroutines)."`

	LogFormat     string        `help:"Log format: auto (text on a terminal, JSON otherwise), text or json." default:"auto" enum:"auto,text,json"`
	LogLevel      string        `help:"Log level: debug, info, warn or error." default:"info" enum:"debug,info,warn,error"`
	ProgressEvery time.Duration `help:"Log progress at this interval (0 turns it off)." default:"5s"`
	profileFlags  `embed:""`

	stall *stallWatch // the readiness probe's view of the loop, with --metrics-addr
}

// catalogFlags select the Iceberg catalog: run publishes through it,
// tables and views read the tables' current snapshots from it.
type catalogFlags struct {
	Catalog          string            `help:"The Apache Iceberg catalog: run also publishes every table through it, tables and views show what it holds. hadoop (metadata files beside the data, local sinks), sql (SQLite or PostgreSQL, the JDBC catalog of Spark and Trino), rest or glue. Off when empty: the files alone, as before."`
	CatalogURI       string            `name:"catalog-uri" help:"The sql catalog's database (sqlite:///PATH/catalog.db or postgres://USER@HOST:PORT/DB) or the rest catalog's endpoint; credentials in it are redacted from logs and errors."`
	CatalogWarehouse string            `name:"catalog-warehouse" help:"Where Iceberg metadata goes (file:///DIR or s3://BUCKET/PREFIX); default for hadoop and sql: {sink}/_iceberg, beside the data folders and never inside one."`
	CatalogProperty  map[string]string `name:"catalog-property" help:"Catalog property KEY=VALUE as known from Spark (credential, token, s3.endpoint, glue.region, allow-unsafe-commits...). Repeatable." mapsep:";"`
	CatalogNamespace string            `name:"catalog-namespace" help:"Iceberg namespace of every table (dot-separated levels); default: each source table's schema, so SALES.ORDERS is table ORDERS in namespace SALES."`
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

// storeConfig is the store the sink flags describe.
func (r *sinkFlags) storeConfig(logger *slog.Logger) (store.Config, error) {
	cfg := store.Config{URL: r.Sink, S3: store.S3Config{
		Endpoint: r.S3Endpoint, Region: r.S3Region,
		AccessKeyID: r.S3AccessKeyID, SecretAccessKey: r.S3SecretAccessKey, CABundle: r.S3CABundle,
		PartSize: r.S3PartSize, MultipartAbove: r.S3MultipartAbove, UploadConcurrency: r.S3UploadConcurrency,
		SSEKMSKeyID: r.S3SSEKMSKeyID, StorageClass: r.S3StorageClass, RequestTimeout: r.S3RequestTimeout,
		RetryFor: r.S3RetryFor, Logger: logger,
	}}
	if r.S3SSE != "none" {
		cfg.S3.SSE = r.S3SSE
	}
	if r.S3PathStyle != "auto" {
		ps := r.S3PathStyle == "true"
		cfg.S3.PathStyle = &ps
	}
	if (r.S3AccessKeyID == "") != (r.S3SecretAccessKey == "") {
		missing := "--s3-secret-access-key (or EXPORTER_S3_SECRET_ACCESS_KEY)"
		if r.S3AccessKeyID == "" {
			missing = "--s3-access-key-id (or EXPORTER_S3_ACCESS_KEY_ID)"
		}
		return cfg, fmt.Errorf("--s3-access-key-id and --s3-secret-access-key go together, and %s is not set; give both, or neither for the AWS credential chain", missing)
	}
	return cfg, nil
}

// dialerConfig is how the Kafka flags say to reach the brokers.
func (r *runCmd) dialerConfig() source.DialerConfig {
	return source.DialerConfig{TLS: r.KafkaTLS, TLSCA: r.KafkaTLSCA, TLSInsecure: r.KafkaTLSInsecure,
		SASL: r.KafkaSASL, Username: r.KafkaUsername, Password: r.KafkaPassword}
}
