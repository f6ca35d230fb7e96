// Command genstream writes a reproducible synthetic GoldenGate Data Streams
// file for trying out and benchmarking the exporter.
package main

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
)

func main() {
	var o gen.Options
	out := flag.String("out", "-", "output file (.gz is gzipped); - is stdout")
	flag.IntVar(&o.Records, "records", 100000, "DML records")
	flag.IntVar(&o.Tables, "tables", 4, "tables")
	flag.IntVar(&o.Columns, "columns", 12, "columns per table (at least 6)")
	flag.IntVar(&o.MaxColumns, "max-columns", 0, "when above -columns, each table gets between -columns and this many")
	flag.Uint64Var(&o.Seed, "seed", 1, "random seed; the same seed gives the same stream")
	flag.Float64Var(&o.NullRatio, "null-ratio", 0.1, "share of nullable values that are null")
	flag.IntVar(&o.DDLEvery, "ddl-every", 0, "add a column to a table every N records (0: never)")
	flag.Float64Var(&o.UpdateRatio, "update-ratio", 0.3, "share of updates")
	flag.Float64Var(&o.DeleteRatio, "delete-ratio", 0.1, "share of deletes")
	flag.DurationVar(&o.Step, "step", 10*time.Millisecond, "op_ts between records (the stream spans records × step, from 22:00 UTC)")
	flag.Parse()
	var w io.Writer = os.Stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
		if strings.HasSuffix(*out, ".gz") {
			gz := gzip.NewWriter(f)
			defer gz.Close()
			w = gz
		}
	}
	st, err := gen.Write(w, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "wrote %d DML records (%d DDL) over %d tables, %d bytes\n", st.DML, st.DDL, len(st.TableNames), st.Bytes)
}
