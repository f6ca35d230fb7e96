package cdc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

func TestParseTimestamp(t *testing.T) {
	ok := []struct {
		in   string
		want time.Time
	}{
		// the reference examples
		{"2026-07-13T04:01:01.123456Z", utc(2026, 7, 13, 4, 1, 1, 123456000)},
		{"2026-07-13T04:03:15.000000Z", utc(2026, 7, 13, 4, 3, 15, 0)},
		{"2026-07-13T04:04:30Z", utc(2026, 7, 13, 4, 4, 30, 0)},
		{"2026-07-13t04:04:30z", utc(2026, 7, 13, 4, 4, 30, 0)},

		// no zone: UTC
		{"2026-07-13T04:01:01", utc(2026, 7, 13, 4, 1, 1, 0)},
		{"2026-07-13T04:01:01.5", utc(2026, 7, 13, 4, 1, 1, 500000000)},
		// space separator, as Qlik and some GoldenGate formatters write it
		{"2026-07-13 04:01:01", utc(2026, 7, 13, 4, 1, 1, 0)},
		{"2026-07-13 04:01:01.123456", utc(2026, 7, 13, 4, 1, 1, 123456000)},
		{"2026-07-13 04:01:01+02:00", utc(2026, 7, 13, 2, 1, 1, 0)},

		// offsets ±hh:mm
		{"2026-07-13T04:01:01+02:00", utc(2026, 7, 13, 2, 1, 1, 0)},
		{"2026-07-13T04:01:01-02:00", utc(2026, 7, 13, 6, 1, 1, 0)},
		{"2026-07-13T04:01:01+05:30", utc(2026, 7, 12, 22, 31, 1, 0)},
		{"2026-07-13T04:01:01-09:30", utc(2026, 7, 13, 13, 31, 1, 0)},
		{"2026-07-13T04:01:01+00:00", utc(2026, 7, 13, 4, 1, 1, 0)},
		{"2026-07-13T04:01:01-00:00", utc(2026, 7, 13, 4, 1, 1, 0)},
		{"2026-07-13T04:01:01+14:00", utc(2026, 7, 12, 14, 1, 1, 0)},
		// ±hhmm
		{"2026-07-13T04:01:01+0200", utc(2026, 7, 13, 2, 1, 1, 0)},
		{"2026-07-13T04:01:01-0530", utc(2026, 7, 13, 9, 31, 1, 0)},
		{"2026-07-13T04:01:01.25+0545", utc(2026, 7, 12, 22, 16, 1, 250000000)},
		// ±hh
		{"2026-07-13T04:01:01+02", utc(2026, 7, 13, 2, 1, 1, 0)},
		{"2026-07-13T04:01:01-11", utc(2026, 7, 13, 15, 1, 1, 0)},

		// offsets that cross a day, month and year boundary
		{"2026-07-13T01:30:00+02:00", utc(2026, 7, 12, 23, 30, 0, 0)},
		{"2026-07-13T00:00:00.000001+02:00", utc(2026, 7, 12, 22, 0, 0, 1000)},
		{"2026-07-12T23:30:00-02:00", utc(2026, 7, 13, 1, 30, 0, 0)},
		{"2026-08-01T00:59:59+01:00", utc(2026, 7, 31, 23, 59, 59, 0)},
		{"2027-01-01T01:00:00+02:00", utc(2026, 12, 31, 23, 0, 0, 0)},
		{"2026-12-31T23:00:00-01:00", utc(2027, 1, 1, 0, 0, 0, 0)},
		{"2024-03-01T00:30:00+01:00", utc(2024, 2, 29, 23, 30, 0, 0)},

		// 1 to 9 fractional digits, each scaled to nanoseconds
		{"2026-07-13T04:01:01.1Z", utc(2026, 7, 13, 4, 1, 1, 100000000)},
		{"2026-07-13T04:01:01.12Z", utc(2026, 7, 13, 4, 1, 1, 120000000)},
		{"2026-07-13T04:01:01.123Z", utc(2026, 7, 13, 4, 1, 1, 123000000)},
		{"2026-07-13T04:01:01.1234Z", utc(2026, 7, 13, 4, 1, 1, 123400000)},
		{"2026-07-13T04:01:01.12345Z", utc(2026, 7, 13, 4, 1, 1, 123450000)},
		{"2026-07-13T04:01:01.123456Z", utc(2026, 7, 13, 4, 1, 1, 123456000)},
		{"2026-07-13T04:01:01.1234567Z", utc(2026, 7, 13, 4, 1, 1, 123456700)},
		{"2026-07-13T04:01:01.12345678Z", utc(2026, 7, 13, 4, 1, 1, 123456780)},
		{"2026-07-13T04:01:01.123456789Z", utc(2026, 7, 13, 4, 1, 1, 123456789)},
		{"2026-07-13T04:01:01.000000001Z", utc(2026, 7, 13, 4, 1, 1, 1)},
		{"2026-07-13T04:01:01.999999999-01:00", utc(2026, 7, 13, 5, 1, 1, 999999999)},
		{"2026-07-13T04:01:01.050", utc(2026, 7, 13, 4, 1, 1, 50000000)},
		// ISO 8601 allows a comma as the decimal sign
		{"2026-07-13T04:01:01,5Z", utc(2026, 7, 13, 4, 1, 1, 500000000)},

		// calendar edges that are valid
		{"2024-02-29T12:00:00Z", utc(2024, 2, 29, 12, 0, 0, 0)},
		{"2000-02-29T00:00:00Z", utc(2000, 2, 29, 0, 0, 0, 0)},
		{"2026-04-30T00:00:00Z", utc(2026, 4, 30, 0, 0, 0, 0)},
		{"2026-12-31T23:59:59.999999999Z", utc(2026, 12, 31, 23, 59, 59, 999999999)},
		{"1970-01-01T00:00:00Z", utc(1970, 1, 1, 0, 0, 0, 0)},
		{"1899-12-31T00:00:00Z", utc(1899, 12, 31, 0, 0, 0, 0)},
		{"9999-12-31T23:59:59Z", utc(9999, 12, 31, 23, 59, 59, 0)},
	}
	for _, c := range ok {
		got, err := cdc.ParseTimestamp([]byte(c.in))
		if err != nil {
			t.Errorf("ParseTimestamp(%q): %v", c.in, err)
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("ParseTimestamp(%q) = %v, want %v", c.in, got, c.want)
		}
		if got.Location() != time.UTC {
			t.Errorf("ParseTimestamp(%q) location = %v, want UTC", c.in, got.Location())
		}
	}

	bad := []string{
		// garbage and truncation
		"", "garbage", "now", "2026", "2026-07-13", "2026-07-13T", "2026-07-13T04:01", "2026-07-13T04:01:0",
		"1783915261", "1783915261123", "2026-07-13T04:01:01ZZ", "Z2026-07-13T04:01:01",
		"2026/07/13T04:01:01Z", "2026-07-13X04:01:01Z", "2026-07-13_04:01:01", "2026-07-13T04-01-01Z",
		"2026-7-13T04:01:01Z", "2026-07-3T04:01:01Z", "26-07-13T04:01:01Z", "+2026-07-13T04:01:01Z",
		"abcd-07-13T04:01:01Z", "2026-0x-13T04:01:01Z", "2026-07-13T4:01:01Z", "2026-07-13T04:1:01Z",
		" 2026-07-13T04:01:01Z", "2026-07-13T04:01:01Z ", "2026-07-13T04:01:01 Z", "2026-07-13T04:01:01\x00",
		"2026-07-13T04:01:01 UTC", "2026-07-13T04:01:01GMT",
		// fraction: a dot needs 1 to 9 digits
		"2026-07-13T04:01:01.", "2026-07-13T04:01:01.Z", "2026-07-13T04:01:01.+02:00",
		"2026-07-13T04:01:01.1234567890Z", "2026-07-13T04:01:01.1234567891", "2026-07-13T04:01:01.12a",
		"2026-07-13T04:01:01..1Z", "2026-07-13T04:01:01.1.2Z",
		// zones
		"2026-07-13T04:01:01+", "2026-07-13T04:01:01-", "2026-07-13T04:01:01+2", "2026-07-13T04:01:01+2:00",
		"2026-07-13T04:01:01+02:0", "2026-07-13T04:01:01+020", "2026-07-13T04:01:01+02:000",
		"2026-07-13T04:01:01+02:00:00", "2026-07-13T04:01:01+02-00", "2026-07-13T04:01:01+0a:00",
		"2026-07-13T04:01:01+24:00", "2026-07-13T04:01:01+02:60", "2026-07-13T04:01:01+2400", "2026-07-13T04:01:01+0260",
		"2026-07-13T04:01:01+99", "2026-07-13T04:01:01*02:00", "2026-07-13T04:01:01Z+02:00", "2026-07-13T04:01:01+02:00Z",
		// invalid dates and times
		"2026-02-30T00:00:00Z", "2026-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
		"2026-06-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-07-00T00:00:00Z",
		"2026-07-32T00:00:00Z", "2026-07-13T24:00:00Z", "2026-07-13T24:00:00", "2026-07-13T23:60:00Z",
		"2026-07-13T23:59:60Z", "2026-07-13T99:99:99Z", "2026-99-99T00:00:00Z",
	}
	for _, in := range bad {
		if got, err := cdc.ParseTimestamp([]byte(in)); err == nil {
			t.Errorf("ParseTimestamp(%q) = %v, want an error", in, got)
		}
	}
}

// TestParseTimestampAgreesWithTimeParse cross-checks RFC 3339 inputs with
// the standard library's parser.
func TestParseTimestampAgreesWithTimeParse(t *testing.T) {
	for _, in := range []string{
		"2026-07-13T04:01:01.123456Z", "2026-07-13T01:30:00.5+02:00", "2026-12-31T22:00:00-05:00",
		"2024-02-29T23:59:59.999999999-01:00", "2026-03-29T02:30:00+01:00", "2026-01-01T00:00:00.000000001+13:45",
	} {
		want, err := time.Parse(time.RFC3339Nano, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cdc.ParseTimestamp([]byte(in))
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTimestamp(%q) = %v, %v; time.Parse says %v", in, got, err, want.UTC())
		}
	}
}

// The hand-written date arithmetic agrees with time.Date on every day of
// years 0000 to 9999 (sampled) and on leap days.
func TestParseTimestampAgreesWithTimeDate(t *testing.T) {
	check := func(y, m, d int) {
		t.Helper()
		text := fmt.Sprintf("%04d-%02d-%02dT13:14:15.123456+02:30", y, m, d)
		got, err := cdc.ParseTimestamp([]byte(text))
		want := time.Date(y, time.Month(m), d, 13, 14, 15, 123456000, time.UTC).Add(-150 * time.Minute)
		if err != nil || !got.Equal(want) {
			t.Fatalf("ParseTimestamp(%s) = %v, %v; want %v", text, got, err, want)
		}
	}
	for y := 0; y <= 9999; y += 7 {
		for m := 1; m <= 12; m++ {
			check(y, m, 1)
			check(y, m, time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day())
		}
	}
	for _, y := range []int{0, 4, 100, 400, 1900, 2000, 2024, 2100, 9996} {
		if _, err := cdc.ParseTimestamp([]byte(fmt.Sprintf("%04d-02-29T00:00:00Z", y))); (err == nil) != (y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
			t.Errorf("%04d-02-29: %v", y, err)
		}
	}
}

// ParseTimestampMicros gives time.Time's UnixMicro for every count of
// fractional digits, and says when digits below the microsecond were
// dropped, before and after the epoch.
func TestParseTimestampMicros(t *testing.T) {
	for _, in := range []string{
		"2026-07-13T04:01:01Z", "2026-07-13T04:01:01.1Z", "2026-07-13T04:01:01.12Z", "2026-07-13T04:01:01.123Z",
		"2026-07-13T04:01:01.1234Z", "2026-07-13T04:01:01.12345Z", "2026-07-13T04:01:01.123456Z",
		"2026-07-13T04:01:01.1234567Z", "2026-07-13T04:01:01.12345678Z", "2026-07-13T04:01:01.123456789Z",
		"2026-07-13T04:01:01.123456000Z", "1969-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.9999991Z",
		"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999-01:00",
	} {
		want, err := time.Parse(time.RFC3339Nano, in)
		if err != nil {
			t.Fatal(err)
		}
		us, exact, err := cdc.ParseTimestampMicros([]byte(in))
		if err != nil || us != want.UnixMicro() || exact != (want.Nanosecond()%1000 == 0) {
			t.Errorf("ParseTimestampMicros(%q) = %d, %v, %v; want %d, exact %v", in, us, exact, err, want.UnixMicro(), want.Nanosecond()%1000 == 0)
		}
	}
	for _, in := range []string{"2026-07-13T04:01:01.", "2026-07-13T04:01:01.1234567890Z", "2026-07-1xT04:01:01Z", "2026-07-13T04:01:0/Z"} {
		if _, _, err := cdc.ParseTimestampMicros([]byte(in)); err == nil {
			t.Errorf("ParseTimestampMicros(%q): no error", in)
		}
	}
}
