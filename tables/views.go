package tables

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// SparkSetting is one Spark configuration entry of the catalog.
type SparkSetting struct {
	Key, Value string
}

// sensitiveProperty tells a catalog property that holds a secret: it is
// never printed.
func sensitiveProperty(key string) bool {
	k := strings.ToLower(key)
	for _, word := range []string{"credential", "token", "secret", "password", "session", "key-id", "access-key"} {
		if strings.Contains(k, word) {
			return true
		}
	}
	return false
}

// SparkSettings is the Spark configuration that makes the catalog of cfg
// the Spark catalog cfg.Name (default lakehouse), so that Spark reads
// the tables the exporter publishes as NAME.NAMESPACE.TABLE. Secrets
// (a database password, credential and token properties) are left out:
// omitted names them, for the user to add.
func SparkSettings(cfg Config) (settings []SparkSetting, omitted []string, err error) {
	cfg = cfg.withDefaults()
	prefix := "spark.sql.catalog." + cfg.Name
	add := func(key, value string) { settings = append(settings, SparkSetting{prefix + key, value}) }
	add("", "org.apache.iceberg.spark.SparkCatalog")
	switch cfg.Kind {
	case Hadoop:
		add(".type", "hadoop")
		add(".warehouse", cfg.Warehouse)
	case SQL:
		jdbcURI, user, hasPassword, err := jdbcURL(cfg.URI)
		if err != nil {
			return nil, nil, err
		}
		add(".type", "jdbc")
		add(".uri", jdbcURI)
		if user != "" {
			add(".jdbc.user", user)
		}
		if hasPassword {
			omitted = append(omitted, prefix+".jdbc.password")
		}
		add(".warehouse", cfg.Warehouse)
	case REST:
		add(".type", "rest")
		add(".uri", cfg.URI)
		if cfg.Warehouse != "" {
			add(".warehouse", cfg.Warehouse)
		}
	case Glue:
		add(".type", "glue")
		if cfg.Warehouse != "" {
			add(".warehouse", cfg.Warehouse)
		}
	default:
		return nil, nil, fmt.Errorf("catalog kind %q is not one of hadoop, sql, rest, glue", cfg.Kind)
	}
	keys := make([]string, 0, len(cfg.Properties))
	for k := range cfg.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if sensitiveProperty(k) {
			omitted = append(omitted, prefix+"."+k)
			continue
		}
		if k == UnsafeCommitsProperty {
			continue // the exporter's own choice; readers do not commit
		}
		add("."+k, cfg.Properties[k])
	}
	return settings, omitted, nil
}

// jdbcURL turns the SQL catalog's URI into the JDBC URL Spark's and
// Trino's JDBC catalogs take, with the user apart and without the
// password.
func jdbcURL(uri string) (jdbc, user string, hasPassword bool, err error) {
	if path, ok := strings.CutPrefix(uri, "sqlite://"); ok {
		return "jdbc:sqlite:" + path, "", false, nil
	}
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", "", false, fmt.Errorf("%q: the sql catalog takes sqlite:///path or postgres:// URIs", redact(uri))
	}
	if u.User != nil {
		user = u.User.Username()
		_, hasPassword = u.User.Password()
	}
	q := u.Query()
	for _, k := range []string{"user", "password"} {
		if v := q.Get(k); v != "" {
			if k == "user" && user == "" {
				user = v
			}
			hasPassword = hasPassword || k == "password"
			q.Del(k)
		}
	}
	out := url.URL{Scheme: "postgresql", Host: u.Host, Path: u.Path, RawQuery: q.Encode()}
	return "jdbc:" + out.String(), user, hasPassword, nil
}

// CatalogViews prints, for the dialect (spark or duckdb), the SQL that
// reads each published table: for Spark, the catalog's settings as SET
// statements and a view per table over NAME.NAMESPACE.TABLE; for DuckDB,
// a view per table over iceberg_scan of its current metadata file.
// Tables the catalog does not hold, or holds without a snapshot, are
// named in a comment.
func CatalogViews(cfg Config, states []State, dialect string) (string, error) {
	cfg = cfg.withDefaults()
	var b strings.Builder
	b.WriteString("\n-- Iceberg tables through the " + string(cfg.Kind) + " catalog; each view is {table}__iceberg.\n")
	switch dialect {
	case "spark":
		settings, omitted, err := SparkSettings(cfg)
		if err != nil {
			return "", err
		}
		b.WriteString("-- Spark needs iceberg-spark-runtime on its classpath; these settings also work as spark-sql --conf KEY=VALUE.\n")
		if cfg.Kind == SQL {
			b.WriteString("-- The JDBC catalog needs the database's JDBC driver too, and the catalog name " + cfg.Name + ": the SQL catalog stores it in every row.\n")
		}
		for _, s := range settings {
			if strings.ContainsAny(s.Value, ";\n\r") {
				return "", fmt.Errorf("spark setting %s: its value has a ';' or a line break, which a SET statement cannot hold", s.Key)
			}
			fmt.Fprintf(&b, "SET %s=%s;\n", s.Key, s.Value)
		}
		for _, k := range omitted {
			fmt.Fprintf(&b, "-- SET %s=...; (a secret: not printed)\n", k)
		}
		for _, st := range states {
			if !st.Exists || st.SnapshotID == 0 {
				fmt.Fprintf(&b, "-- %s: no snapshot in the catalog yet\n", commentSafe(st.Table))
				continue
			}
			parts := make([]string, 0, len(st.Identifier)+1)
			parts = append(parts, sparkIdent(cfg.Name))
			for _, p := range st.Identifier {
				parts = append(parts, sparkIdent(p))
			}
			fmt.Fprintf(&b, "CREATE OR REPLACE TEMPORARY VIEW %s AS SELECT * FROM %s;\n", sparkIdent(st.Table+"__iceberg"), strings.Join(parts, "."))
		}
	case "duckdb":
		b.WriteString("-- DuckDB's iceberg extension reads each table's current metadata file (INSTALL downloads it once).\n")
		b.WriteString("INSTALL iceberg;\nLOAD iceberg;\n")
		for _, st := range states {
			if !st.Exists || st.SnapshotID == 0 {
				fmt.Fprintf(&b, "-- %s: no snapshot in the catalog yet\n", commentSafe(st.Table))
				continue
			}
			fmt.Fprintf(&b, "CREATE OR REPLACE VIEW %s AS SELECT * FROM iceberg_scan(%s);\n",
				`"`+strings.ReplaceAll(st.Table+"__iceberg", `"`, `""`)+`"`, `'`+strings.ReplaceAll(st.MetadataLocation, `'`, `''`)+`'`)
		}
	default:
		return "", fmt.Errorf("unknown SQL dialect %q (want spark or duckdb)", dialect)
	}
	return b.String(), nil
}

func sparkIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// commentSafe keeps a name from ending its SQL comment line.
func commentSafe(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}
