package cdc

import (
	"errors"
	"time"
)

var errBadTimestamp = errors.New("not an ISO 8601 timestamp")

// ParseTimestamp parses an ISO 8601 timestamp as GoldenGate and Qlik write
// it: date, 'T' or space, time with up to nine fractional digits, and an
// optional zone (Z, ±hh:mm or ±hhmm). A timestamp without a zone is taken
// as UTC, which is what both sources emit by default. The result is in UTC.
func ParseTimestamp(b []byte) (time.Time, error) {
	// Fixed layout parsing by hand: time.Parse is several times slower and
	// this runs once per record.
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return time.Time{}, errBadTimestamp
	}
	year, ok1 := digits(b[0:4])
	month, ok2 := digits(b[5:7])
	day, ok3 := digits(b[8:10])
	hour, ok4 := digits(b[11:13])
	minute, ok5 := digits(b[14:16])
	sec, ok6 := digits(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, errBadTimestamp
	}
	if day > daysIn(time.Month(month), year) {
		return time.Time{}, errBadTimestamp
	}
	rest := b[19:]
	nanos := 0
	if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
		n := 1
		scale := 100000000
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			if n > 9 {
				return time.Time{}, errBadTimestamp
			}
			nanos += int(rest[n]-'0') * scale
			scale /= 10
			n++
		}
		if n == 1 {
			return time.Time{}, errBadTimestamp
		}
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
				return time.Time{}, errBadTimestamp
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
			return time.Time{}, errBadTimestamp
		}
		if !okh || !okm || hh > 23 || mm > 59 {
			return time.Time{}, errBadTimestamp
		}
		offset = hh*3600 + mm*60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, errBadTimestamp
	}
	secs := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec-offset)
	return time.Unix(secs, int64(nanos)).UTC(), nil
}

// daysFromCivil is the number of days from 1970-01-01 to the date in the
// proleptic Gregorian calendar (H. Hinnant's algorithm): time.Date's
// normalization cost more than the rest of the parse.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
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
