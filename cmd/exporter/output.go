package main

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/redact"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
)

func newLogger(w io.Writer, format, level string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: redactAttr}
	if format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				format = "text"
			}
		}
	}
	var logger *slog.Logger
	if format == "text" {
		logger = slog.New(slog.NewTextHandler(w, opts))
	} else {
		logger = slog.New(slog.NewJSONHandler(w, opts))
	}
	// Libraries that print with the standard log package (iceberg-go
	// warns that way: a metadata file it could not delete, a version
	// hint it could not write) would put plain lines among JSON ones.
	log.SetFlags(0)
	log.SetOutput(libraryLog{logger})
	return logger
}

// libraryLog writes a library's standard-log line as a WARN record.
type libraryLog struct{ logger *slog.Logger }

func (l libraryLog) Write(p []byte) (int, error) {
	l.logger.Warn(strings.TrimSpace(string(p)), "from", "library")
	return len(p), nil
}

// printSummary prints the run's summary; ends tells whether its source
// ends (files, a Kafka drain), for which a stop before that end is said,
// with where each partition stands, and failed whether the run failed
// (its error says why, and running it again does not help until what it
// names is fixed).
func printSummary(w io.Writer, s pipeline.Summary, ends, failed bool) {
	fmt.Fprintf(w, "records read:   %d\n", s.Records)
	if ends {
		state := "read to its end"
		switch {
		case s.Ended:
		case failed:
			state = "NOT FINISHED: the run failed (see its error); fix what the error names, then run again to finish"
		default:
			state = "NOT FINISHED: stopped before its end; run again to finish"
		}
		if s.BytesTotal > 0 {
			state += fmt.Sprintf(" (%d of %d bytes read)", s.BytesRead, s.BytesTotal)
		}
		fmt.Fprintf(w, "input:          %s\n", state)
		if !s.Ended {
			for _, p := range s.Positions {
				fmt.Fprintf(w, "position:       %-30s last read %d, checkpointed %d\n", termSafe(p.Partition, false), p.LastRead, p.Checkpointed)
			}
		}
	}
	if s.Skipped > 0 {
		fmt.Fprintf(w, "already durable (skipped): %d\n", s.Skipped)
	}
	tables := make([]string, 0, len(s.RowsByTable))
	for t := range s.RowsByTable {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		fmt.Fprintf(w, "rows written:   %-30s %d\n", termSafe(t, false), s.RowsByTable[t])
	}
	fmt.Fprintf(w, "rejected:       %d", s.Rejected)
	if s.Rejected > 0 {
		var parts []string
		for r, n := range s.RejectedBy {
			parts = append(parts, fmt.Sprintf("%s=%d", termSafe(string(r), false), n))
		}
		sort.Strings(parts)
		fmt.Fprintf(w, " (%s; see _dlq/)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "\nfiles:          %d\nbytes:          %d\nseconds:        %.2f\n", s.Files, s.Bytes, s.Elapsed.Seconds())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(w, "allocated:      %d bytes in %d objects (Go heap, whole process)\n", ms.TotalAlloc, ms.Mallocs)
}

// printErr prints a line for people on stderr: fmt.Sprintln of args with
// credentials redacted and control characters escaped (line breaks kept,
// for messages listing several problems).
func printErr(w io.Writer, args ...any) {
	line := fmt.Sprintln(args...)
	fmt.Fprintln(w, forPeople(strings.TrimSuffix(line, "\n"), true))
}

// printErrf is printErr with a format.
func printErrf(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, forPeople(strings.TrimSuffix(fmt.Sprintf(format, args...), "\n"), true))
}

// forPeople makes text safe to show on a terminal: credentials redacted
// and control characters escaped.
func forPeople(s string, keepNewlines bool) string {
	return termSafe(redact.String(s), keepNewlines)
}

// termSafe escapes what a terminal would act on instead of showing: C0
// and C1 control characters (ESC sequences clear the screen, set the
// title, move the cursor to forge lines), DEL, the Unicode bidirectional
// overrides, and bytes that are not UTF-8. A table name or a value from
// the input reaches people through it; JSON logs escape on their own.
// keepNewlines keeps '\n' for messages of several lines.
func termSafe(s string, keepNewlines bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) && !(keepNewlines && r == '\n') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepNewlines && r == '\n':
			b.WriteByte('\n')
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f
}

// redactAttr keeps credentials out of the logs: string and error values
// go through redact.String.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	switch v := a.Value.Any().(type) {
	case string:
		if r := redact.String(v); r != v {
			return slog.String(a.Key, r)
		}
	case error:
		if s := v.Error(); redact.String(s) != s {
			return slog.String(a.Key, redact.String(s))
		}
	}
	return a
}
