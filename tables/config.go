package tables

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"

	// The REST and Glue catalogs register themselves with catalog.Load.
	_ "github.com/apache/iceberg-go/catalog/glue"
	_ "github.com/apache/iceberg-go/catalog/rest"

	// iceberg-go's file IO for s3:// tables (manifests, and the data
	// files maintenance reads, lists and deletes) registers itself with
	// its io package; file:// is built in.
	_ "github.com/apache/iceberg-go/io/gocloud/s3"

	// database/sql drivers of the SQL catalog: PostgreSQL (pgx) and
	// SQLite (modernc, pure Go: no cgo for the catalog).
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// Kind names a catalog implementation.
type Kind string

// The catalogs Open knows.
const (
	// Hadoop keeps each table's metadata in files under the warehouse
	// folder; commits are atomic only on a local file system.
	Hadoop Kind = "hadoop"
	// SQL keeps the tables' metadata pointers in a database (SQLite or
	// PostgreSQL), the JDBC catalog of Spark and Trino.
	SQL Kind = "sql"
	// REST talks to an Iceberg REST catalog (Polaris, Nessie, Lakekeeper...).
	REST Kind = "rest"
	// Glue uses the AWS Glue Data Catalog.
	Glue Kind = "glue"
)

// Partitioning is the partition spec of the tables Publisher creates.
type Partitioning string

// The partition specs Publisher knows.
const (
	// ByDay partitions by day(op_ts), the default.
	ByDay Partitioning = "day"
	// ByHour partitions by hour(op_ts).
	ByHour Partitioning = "hour"
	// Unpartitioned is for data files whose op_ts may span several days
	// (the layout's date taken from processing time): Iceberg requires
	// every row of a file to fall in the file's partition.
	Unpartitioned Partitioning = "none"
)

// UnsafeCommitsProperty is the iceberg-go property that lets the Hadoop
// catalog commit on object storage, where its rename is not atomic.
const UnsafeCommitsProperty = "allow-unsafe-commits"

// Config opens a catalog. It is plain data, so that command-line flags,
// YAML and environment variables fill it alike.
type Config struct {
	// Kind is hadoop, sql, rest or glue. Required.
	Kind Kind
	// Name is the catalog's name; the SQL catalog stores it in every row
	// and Spark's JDBC catalog must be given the same name to see the
	// tables. Default "lakehouse".
	Name string
	// URI is the SQL catalog's database (sqlite:///path/catalog.db,
	// postgres://user@host:port/db?...) or the REST endpoint. Unused by
	// hadoop and glue.
	URI string
	// Warehouse is where table metadata goes: a folder (file:///...) or
	// bucket prefix (s3://...). Required for hadoop and sql; for rest it
	// is passed to the server, which may name a warehouse by another
	// word.
	Warehouse string
	// Properties are passed to the catalog as their users know them from
	// Spark (credential, token, scope, s3.endpoint, glue.region,
	// allow-unsafe-commits...). They win over what Open derives.
	Properties map[string]string
	// Namespace is the Iceberg namespace of every table (dot-separated
	// levels). Empty: the source table's schema, so SALES.ORDERS is
	// table ORDERS in namespace SALES. Set: every table goes into it,
	// named after its whole source name with "_" between the parts
	// (SALES_ORDERS).
	Namespace string
	// Partitioning is the tables' partition spec. Default ByDay.
	Partitioning Partitioning
	// ExporterVersion is written into the table properties of the tables
	// Publisher creates.
	ExporterVersion string
	// CommitAttempts bounds the attempts of one table's commit when the
	// catalog reports a conflict (another writer committed first).
	// Default 8.
	CommitAttempts int
	// PublishConcurrency is how many tables a round commits at once.
	// Default 8.
	PublishConcurrency int
	// Observer, when set, is told about every commit and conflict, for
	// metrics. Default: none.
	Observer Observer
	// TablesHeld, when set, is told how many tables the Publisher keeps
	// the last state of, each time that number changes: about 150 KB a
	// table that --max-buffer-bytes does not count, which the process
	// allows for in its memory limit. It must be cheap and safe for
	// concurrent use. Default: none.
	TablesHeld func(n int)
	// WrapCatalog, when set, wraps the catalog Open opened, and the
	// Publisher works through what it returns: tests inject catalog
	// failures with it (internal/catalogfail). Tables the wrapper loads or
	// creates must commit through it. Default: none.
	WrapCatalog func(catalog.Catalog) catalog.Catalog
}

// Validate reports every problem of c at once, each with its key.
func (c Config) Validate() error {
	var problems []string
	switch c.Kind {
	case Hadoop, SQL:
		if c.Warehouse == "" {
			problems = append(problems, fmt.Sprintf("catalog-warehouse: the %s catalog needs a warehouse (file:///DIR or s3://BUCKET/PREFIX)", c.Kind))
		}
	case REST:
		if c.URI == "" {
			problems = append(problems, "catalog-uri: the rest catalog needs its endpoint (https://HOST/...)")
		}
	case Glue:
	case "":
		problems = append(problems, "catalog: missing kind (hadoop, sql, rest or glue)")
	default:
		problems = append(problems, fmt.Sprintf("catalog: unknown kind %q (want hadoop, sql, rest or glue)", c.Kind))
	}
	if err := checkUserinfo(c.URI); err != nil {
		problems = append(problems, "catalog-uri: "+err.Error())
	} else if c.Kind == SQL {
		if _, _, _, err := sqlDriver(c.URI); err != nil {
			problems = append(problems, "catalog-uri: "+err.Error())
		}
	}
	if c.Kind == Hadoop && c.Warehouse != "" {
		if err := checkHadoopWarehouse(c.Warehouse, c.Properties); err != nil {
			problems = append(problems, "catalog-warehouse: "+err.Error())
		}
	}
	if strings.Contains(c.Warehouse, "://") {
		if err := CheckLocation(c.Warehouse); err != nil {
			problems = append(problems, "catalog-warehouse: "+err.Error())
		}
	}
	switch c.Partitioning {
	case "", ByDay, ByHour, Unpartitioned:
	default:
		problems = append(problems, fmt.Sprintf("partitioning: unknown %q (want day, hour or none)", c.Partitioning))
	}
	if c.Namespace != "" {
		if err := checkName(strings.Split(c.Namespace, ".")); err != nil {
			problems = append(problems, "catalog-namespace: "+err.Error())
		}
	}
	if c.CommitAttempts < 0 {
		problems = append(problems, "commit attempts: must not be negative")
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("catalog config: %s", strings.Join(problems, "; "))
	}
	return nil
}

// checkHadoopWarehouse refuses the Hadoop catalog on object storage: it
// commits by writing the next metadata file only if absent, which object
// stores do not make atomic with the version hint, so two writers can
// both win and one's snapshot is lost.
func checkHadoopWarehouse(warehouse string, props map[string]string) error {
	u, err := url.Parse(warehouse)
	if err != nil {
		return fmt.Errorf("warehouse %q is not a URL: %w", warehouse, err)
	}
	if u.Scheme == "" || u.Scheme == "file" {
		return nil
	}
	if props[UnsafeCommitsProperty] == "true" {
		return nil
	}
	return fmt.Errorf("the hadoop catalog on %s:// is not safe: its commits are atomic only on a local file system, and on object storage two writers can both commit and one snapshot is lost; use --catalog sql or rest, or set --catalog-property %s=true to accept that risk with a single writer",
		u.Scheme, UnsafeCommitsProperty)
}

// sqlDriver picks the database/sql driver, its DSN and the bun dialect
// for a SQL catalog URI.
func sqlDriver(uri string) (driver, dsn string, dialect sqlcat.SupportedDialect, err error) {
	switch {
	case strings.HasPrefix(uri, "sqlite://"):
		path := strings.TrimPrefix(uri, "sqlite://")
		if path == "" || path == "/" {
			return "", "", "", fmt.Errorf("%q names no database file (want sqlite:///path/catalog.db)", uri)
		}
		// WAL and a busy timeout on every pooled connection, as the SQL
		// catalog asks of SQLite callers with concurrent writers. Its
		// write transactions read before they write: begun deferred, two
		// writers (two instances creating one table) meet at the upgrade
		// to a write lock, where SQLite answers SQLITE_BUSY at once
		// instead of waiting; begun immediate, the second waits its turn.
		return "sqlite", "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate", sqlcat.SQLite, nil
	case strings.HasPrefix(uri, "postgres://"), strings.HasPrefix(uri, "postgresql://"):
		return "pgx", uri, sqlcat.Postgres, nil
	case uri == "":
		return "", "", "", errors.New("the sql catalog needs a database (sqlite:///path/catalog.db or postgres://...)")
	default:
		return "", "", "", fmt.Errorf("%q: the sql catalog takes sqlite:///path or postgres:// URIs", redact(uri))
	}
}

// checkUserinfo refuses a URI whose user name or password holds a
// character that ends it early unless percent-encoded: the driver would
// read part of the password as the host or the path, fail, and quote it
// in its error. The URI is not quoted: it holds the password.
func checkUserinfo(uri string) error {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || scheme == "sqlite" {
		// A file path, with no user information; it may hold a space.
		return nil
	}
	const how = "percent-encode it in the URI (@ as %40, / as %2F, ? as %3F, # as %23, a space as %20); the URI is not shown here, as it holds a password"
	if strings.ContainsAny(uri, " \t\r\n") {
		return errors.New("it holds white space: if that is in the password, " + how)
	}
	authority, after := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, after = rest[:i], rest[i:]
	}
	// An @ past the authority belongs to a password that held a /, ? or #
	// unless it is in a query parameter's value (?user=ops@corp).
	path, query := after, ""
	if i := strings.IndexAny(after, "?#"); i >= 0 {
		path, query = after[:i], after[i:]
	}
	inQueryKey := false
	if at := strings.IndexByte(query, '@'); at >= 0 {
		inQueryKey = query[0] == '#' || !strings.Contains(query[:at], "=")
	}
	switch {
	case strings.Count(authority, "@") > 1:
		return errors.New("its user name or password holds an @: " + how)
	case strings.Contains(path, "@"), inQueryKey:
		return errors.New("its password seems to hold a /, ? or # (an @ comes after one): " + how)
	}
	return nil
}

// ping reaches the catalog's database. A SQLite connection sets WAL
// mode as it opens, which takes the file's write lock for a moment: a
// second process (or instance) opening the same file then gets
// SQLITE_BUSY at once, before the busy timeout applies. That is tried
// again, for at most sqliteBusyFor.
func ping(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(sqliteBusyFor)
	for {
		err := db.PingContext(ctx)
		var coded interface{ Code() int }
		if err == nil || !errors.As(err, &coded) || coded.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

const (
	sqliteBusy    = 5 // SQLITE_BUSY, and its extended codes in the low byte
	sqliteBusyFor = 10 * time.Second
)

// SQLiteFile is the file of a SQL catalog kept in SQLite.
func (c Config) SQLiteFile() (string, bool) {
	if c.Kind != SQL {
		return "", false
	}
	return strings.CutPrefix(c.URI, "sqlite://")
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// redact drops a URI's password for messages.
func redact(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.User == nil {
		return uri
	}
	return u.Redacted()
}

// openCatalog opens the iceberg-go catalog cfg names.
func openCatalog(ctx context.Context, cfg Config) (catalog.Catalog, error) {
	props := iceberg.Properties{}
	if cfg.Warehouse != "" {
		props["warehouse"] = cfg.Warehouse
	}
	if cfg.URI != "" && cfg.Kind == REST {
		props["uri"] = cfg.URI
	}
	for k, v := range cfg.Properties {
		props[k] = v
	}
	switch cfg.Kind {
	case Hadoop:
		cat, err := hadoop.NewCatalog(cfg.Name, cfg.Warehouse, props)
		if err != nil {
			return nil, fmt.Errorf("open hadoop catalog at %s: %w", cfg.Warehouse, err)
		}
		return cat, nil
	case SQL:
		driver, dsn, dialect, err := sqlDriver(cfg.URI)
		if err != nil {
			return nil, err
		}
		if path, ok := cfg.SQLiteFile(); ok {
			if dir := filepath.Dir(path); !isDir(dir) {
				return nil, fmt.Errorf("the folder %s of the SQLite catalog %s does not exist: create it, or check the path of --catalog-uri", dir, path)
			}
		}
		db, err := sql.Open(driver, dsn)
		if err != nil {
			return nil, fmt.Errorf("open sql catalog database %s: %w", redact(cfg.URI), err)
		}
		if err := ping(ctx, db); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("reach sql catalog database %s (is it running, and do the credentials hold?): %w", redact(cfg.URI), err)
		}
		props["init_catalog_tables"] = props.Get("init_catalog_tables", "true")
		cat, err := sqlcat.NewCatalog(cfg.Name, db, dialect, props)
		for attempt := 1; err != nil && attempt < catalogInitAttempts && racedCatalogInit(err); attempt++ {
			// Another instance created the catalog's tables at the same
			// moment: they exist now.
			if err = waitRetry(ctx, attempt); err == nil {
				cat, err = sqlcat.NewCatalog(cfg.Name, db, dialect, props)
			}
		}
		if err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("open sql catalog in %s: %w", redact(cfg.URI), err)
		}
		return &ownedDB{Catalog: cat, db: db}, nil
	case REST, Glue:
		props["type"] = string(cfg.Kind)
		cat, err := catalog.Load(ctx, cfg.Name, props)
		if err != nil {
			if cfg.Kind == REST {
				// The client's first request is GET {uri}/v1/config.
				return nil, fmt.Errorf("open rest catalog %s (is the server running, and is the URI its base, without /v1?): %w", redact(cfg.URI), err)
			}
			return nil, fmt.Errorf("open %s catalog %s: %w", cfg.Kind, redact(cfg.URI), err)
		}
		return cat, nil
	}
	return nil, fmt.Errorf("catalog kind %q is not one of hadoop, sql, rest, glue", cfg.Kind)
}

// ownedDB is the SQL catalog with the database handle Open opened for it:
// the catalog does not close a handle it was given.
type ownedDB struct {
	*sqlcat.Catalog
	db *sql.DB
}

func (o *ownedDB) Close() error {
	return errors.Join(o.Catalog.Close(), o.db.Close())
}

// Identity names the catalog c reaches and where its tables are, without
// credentials, so that a lake can tell the catalog its tables are
// published to from another one: the kind; the SQL catalog's database
// (host, port and database, or SQLite's file) and name; the REST
// endpoint and warehouse; Glue's region and catalog ID; the Hadoop
// warehouse; and the namespace when set. Two configs that differ only
// in credentials, timeouts or other properties have the same identity.
func (c Config) Identity() string {
	c = c.withDefaults()
	var id string
	switch c.Kind {
	case Hadoop:
		id = "hadoop " + strings.TrimSuffix(c.Warehouse, "/")
	case SQL:
		id = "sql " + databaseIdentity(c.URI) + " name " + c.Name
	case REST:
		id = "rest " + endpointIdentity(c.URI)
		if c.Warehouse != "" {
			id += " warehouse " + c.Warehouse
		}
	case Glue:
		id = "glue region " + c.Properties["glue.region"]
		if cid := c.Properties["glue.id"]; cid != "" {
			id += " id " + cid
		}
	default:
		id = string(c.Kind)
	}
	if c.Namespace != "" {
		id += " namespace " + c.Namespace
	}
	return id
}

// databaseIdentity is a SQL catalog URI's database: SQLite's file, or
// PostgreSQL's host, port and database (the user, the password and the
// connection options left out).
func databaseIdentity(uri string) string {
	if path, ok := (Config{Kind: SQL, URI: uri}).SQLiteFile(); ok {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs // relative to where the exporter runs
		}
		return "sqlite " + filepath.Clean(path)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return redact(uri)
	}
	q := u.Query()
	host, port, db := strings.ToLower(u.Hostname()), u.Port(), strings.TrimPrefix(u.Path, "/")
	if host == "" {
		host = q.Get("host")
	}
	if port == "" {
		port = cmp.Or(q.Get("port"), "5432")
	}
	if db == "" {
		db = q.Get("dbname")
	}
	return "postgres " + host + ":" + port + "/" + db
}

// endpointIdentity is a REST catalog's endpoint without user information,
// query or a trailing slash.
func endpointIdentity(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return redact(uri)
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	u.Host = strings.ToLower(u.Host)
	if p := u.Port(); u.Scheme == "https" && p == "443" || u.Scheme == "http" && p == "80" {
		u.Host = u.Hostname()
	}
	return strings.TrimSuffix(u.String(), "/")
}

// withDefaults fills the defaults Config documents.
func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "lakehouse"
	}
	if c.Partitioning == "" {
		c.Partitioning = ByDay
	}
	if c.CommitAttempts == 0 {
		c.CommitAttempts = 8
	}
	if c.PublishConcurrency <= 0 {
		c.PublishConcurrency = 8
	}
	return c
}

// Open validates cfg and opens its catalog.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Publisher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cat, err := openCatalog(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Publisher{cat: cat, opened: cat, cfg: cfg, log: log}
	p.loaded.held = cfg.TablesHeld
	p.warm.init()
	if cfg.WrapCatalog != nil {
		p.cat = cfg.WrapCatalog(cat)
	}
	return p, nil
}

// catalogInitAttempts bounds the openings of a SQL catalog whose tables
// another instance was creating at the same moment.
const catalogInitAttempts = 5

// racedCatalogInit reports whether opening a SQL catalog failed because
// another instance created its tables at the same moment: iceberg-go
// creates them with CREATE TABLE IF NOT EXISTS, and of two such
// statements racing on PostgreSQL one may fail on PostgreSQL's own
// catalog (a unique violation on pg_type, SQLSTATE 23505; the table's row
// type already there, duplicate_object, 42710; or duplicate_table, 42P07)
// instead of finding the table there.
func racedCatalogInit(err error) bool {
	codes := []string{"23505", "42710", "42P07"}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return slices.Contains(codes, pgErr.Code)
	}
	msg := err.Error()
	return slices.ContainsFunc(codes, func(code string) bool { return strings.Contains(msg, "(SQLSTATE "+code+")") })
}
