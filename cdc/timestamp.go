package cdc

import (
	"errors"
	"fmt"
	"time"
)

var errBadTimestamp = errors.New("not an ISO 8601 timestamp")

// ParseTimestamp parses an ISO 8601 timestamp as GoldenGate and Qlik write
// it: date, 'T' or space, time with up to nine fractional digits, and an
// optional zone (Z, ±hh:mm or ±hhmm). A timestamp without a zone is taken
// as UTC, which is what both sources emit by default. The result is in UTC.
func ParseTimestamp(b []byte) (time.Time, error) {
	secs, nanos, err := parseTimestamp(b)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(secs, int64(nanos)).UTC(), nil
}

// ParseOpTS parses an op_ts as ParseTimestamp does and refuses one whose
// UTC date is outside 0001-01-01 to 9999-12-31, the dates Spark and Hive
// hold: the date folder (dt=YYYY-MM-DD) of such a record would have a year
// 0 or 10000, which they cannot read, and a zone can take a timestamp
// written inside the range out of it (9999-12-31T23:59:59-01:00).
func ParseOpTS(b []byte) (time.Time, error) {
	t, err := ParseTimestamp(b)
	if err != nil {
		return t, err
	}
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("%s in UTC is outside 0001-01-01 to 9999-12-31, the dates a date folder can name", t.Format("2006-01-02T15:04:05.999999999Z07:00"))
	}
	return t, nil
}

// ParseTimestampMicros parses b as ParseTimestamp does and returns it in
// microseconds since the Unix epoch; exact is false when b has digits
// below the microsecond, which the result drops. Timestamp columns are
// held in microseconds: going through time.Time cost a third of their
// conversion.
func ParseTimestampMicros(b []byte) (us int64, exact bool, err error) {
	secs, nanos, err := parseTimestamp(b)
	if err != nil {
		return 0, false, err
	}
	return secs*1_000_000 + int64(nanos/1000), nanos%1000 == 0, nil
}

// parseTimestamp parses the fixed layout by hand: time.Parse is several
// times slower, and this runs for every record and timestamp value.
func parseTimestamp(b []byte) (secs int64, nanos int32, err error) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return 0, 0, errBadTimestamp
	}
	// Each digit minus '0' is at most 9 unless it was not a digit (the
	// byte wraps around): one test for all fourteen.
	y0, y1, y2, y3 := b[0]-'0', b[1]-'0', b[2]-'0', b[3]-'0'
	mo0, mo1, d0, d1 := b[5]-'0', b[6]-'0', b[8]-'0', b[9]-'0'
	h0, h1, mi0, mi1, s0, s1 := b[11]-'0', b[12]-'0', b[14]-'0', b[15]-'0', b[17]-'0', b[18]-'0'
	if max(y0, y1, y2, y3, mo0, mo1, d0, d1, h0, h1, mi0, mi1, s0, s1) > 9 {
		return 0, 0, errBadTimestamp
	}
	year := int(y0)*1000 + int(y1)*100 + int(y2)*10 + int(y3)
	month, day := int(mo0)*10+int(mo1), int(d0)*10+int(d1)
	hour, minute, sec := int(h0)*10+int(h1), int(mi0)*10+int(mi1), int(s0)*10+int(s1)
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return 0, 0, errBadTimestamp
	}
	if day > 28 && day > daysIn(time.Month(month), year) {
		return 0, 0, errBadTimestamp
	}
	rest := b[19:]
	if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
		n, frac := 1, uint32(0)
		for n < len(rest) && rest[n]-'0' <= 9 {
			if n > 9 {
				return 0, 0, errBadTimestamp
			}
			frac = frac*10 + uint32(rest[n]-'0')
			n++
		}
		if n == 1 {
			return 0, 0, errBadTimestamp
		}
		nanos = int32(frac * fracScale[n-1])
		rest = rest[n:]
	}
	offset := 0
	switch {
	case len(rest) == 0:
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case rest[0] == '+' || rest[0] == '-':
		var hh, mm int
		var okh, okm bool
		switch len(rest) {
		case 6:
			if rest[3] != ':' {
				return 0, 0, errBadTimestamp
			}
			hh, okh = digits(rest[1:3])
			mm, okm = digits(rest[4:6])
		case 5:
			hh, okh = digits(rest[1:3])
			mm, okm = digits(rest[3:5])
		case 3:
			hh, okh = digits(rest[1:3])
			okm = true
		default:
			return 0, 0, errBadTimestamp
		}
		if !okh || !okm || hh > 23 || mm > 59 {
			return 0, 0, errBadTimestamp
		}
		offset = hh*3600 + mm*60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, 0, errBadTimestamp
	}
	return daysSinceEpoch(uint(year), uint(month), uint(day))*86400 + int64(hour*3600+minute*60+sec-offset), nanos, nil
}

// fracScale[n] turns n fractional digits into nanoseconds.
var fracScale = [10]uint32{0, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 1e2, 1e1, 1}

// daysSinceEpoch is the number of days from 1970-01-01 to the date in
// the proleptic Gregorian calendar (H. Hinnant's days_from_civil), for
// years 0 to 9999: time.Date's normalization cost more than the rest of
// the parse. It works in unsigned arithmetic, since the signed divisions'
// corrections for negative operands were a third of the parse; the year
// is moved one 400-year era on so that January and February of year 0
// stay positive.
func daysSinceEpoch(y, m, d uint) int64 {
	y += 400
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era*146097+doe) - 719468 - 146097
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func daysIn(m time.Month, year int) int {
	if m == time.February && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		return 29
	}
	return monthDays[m]
}
