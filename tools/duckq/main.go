// Command duckq runs one SQL statement on an in-memory DuckDB and prints
// the result as a table. It exists so that the README can show a query of
// the exported lake without asking anyone to install DuckDB.
package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, `usage: duckq "SQL"`)
		os.Exit(2)
	}
	db, err := duckq.Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer db.Close()
	cols, rows, err := duckq.Rows(db, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "duckq:", err)
		os.Exit(1)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, v := range r {
			if v == nil {
				cells[i] = "NULL"
			} else if b, ok := v.([]byte); ok {
				cells[i] = fmt.Sprintf("%q", b)
			} else {
				cells[i] = fmt.Sprint(v)
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}
