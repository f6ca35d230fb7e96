package tables

import (
	"strings"
	"testing"
)

// TestSparkSettingsPerCatalog: each catalog's Spark settings as the
// Iceberg Spark runtime documents them, with no secret among them.
func TestSparkSettingsPerCatalog(t *testing.T) {
	for _, c := range []struct {
		name    string
		cfg     Config
		want    []string
		omitted []string
	}{
		{"hadoop", Config{Kind: Hadoop, Warehouse: "file:///lake/_iceberg"}, []string{
			"spark.sql.catalog.lakehouse=org.apache.iceberg.spark.SparkCatalog",
			"spark.sql.catalog.lakehouse.type=hadoop",
			"spark.sql.catalog.lakehouse.warehouse=file:///lake/_iceberg"}, nil},
		{"postgres", Config{Kind: SQL, URI: "postgres://lake:hunter2secret@db.internal:5433/iceberg?sslmode=require", Warehouse: "s3://bucket/wh"}, []string{
			"spark.sql.catalog.lakehouse=org.apache.iceberg.spark.SparkCatalog",
			"spark.sql.catalog.lakehouse.type=jdbc",
			"spark.sql.catalog.lakehouse.uri=jdbc:postgresql://db.internal:5433/iceberg?sslmode=require",
			"spark.sql.catalog.lakehouse.jdbc.user=lake",
			"spark.sql.catalog.lakehouse.warehouse=s3://bucket/wh"}, []string{"spark.sql.catalog.lakehouse.jdbc.password"}},
		{"rest", Config{Kind: REST, Name: "cat", URI: "https://rest.example/api", Warehouse: "prod",
			Properties: map[string]string{"credential": "id:hunter2secret", "s3.endpoint": "http://minio:9000"}}, []string{
			"spark.sql.catalog.cat=org.apache.iceberg.spark.SparkCatalog",
			"spark.sql.catalog.cat.type=rest",
			"spark.sql.catalog.cat.uri=https://rest.example/api",
			"spark.sql.catalog.cat.warehouse=prod",
			"spark.sql.catalog.cat.s3.endpoint=http://minio:9000"}, []string{"spark.sql.catalog.cat.credential"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			settings, omitted, err := SparkSettings(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range settings {
				got = append(got, s.Key+"="+s.Value)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("settings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			if strings.Join(omitted, ",") != strings.Join(c.omitted, ",") {
				t.Errorf("omitted %v, want %v", omitted, c.omitted)
			}
			sql, err := CatalogViews(c.cfg, nil, "spark")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(sql, "hunter2secret") {
				t.Errorf("a secret in the printed SQL:\n%s", sql)
			}
		})
	}
}
