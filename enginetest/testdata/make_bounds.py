"""Writes bounds.jsonl: one table, BOUNDS.TYPES, with a column of every type
the exporter writes (bounds.hints types them), at the edges where data file
bounds go wrong: decimals of 4, 18, 20 and 38 digits of both signs, doubles
with NaN, infinities and both zeros, strings and binaries longer than the
16 characters Iceberg keeps of a bound, multibyte characters at the cut,
bytes past 0x7f, dates and timestamps before 1970 and near year 9999,
booleans and an all-null column. The earliest timestamp is 0001-01-02:
PySpark cannot hand 0001-01-01T00:00:00Z to Python (year 0 in its
conversion). Each op_ts day is a file (a partition):
a few values (written with a dictionary), many distinct ones (written
plain), NaN in the middle, and repeated values. Run it again after a
change: python3 make_bounds.py > bounds.jsonl
"""

import base64
import json
import random

rng = random.Random(32)
COLUMNS = ["ID", "I64", "D4", "D18", "D20", "D38", "F", "S", "B", "DAY", "TS", "FL", "N"]
TYPES = {"FL": "boolean"}


def meta():
    cols = {c: {"type": TYPES.get(c, "string" if c in ("S", "B", "DAY", "TS", "N") else "number"),
                "null": c != "ID", "key": c == "ID"} for c in COLUMNS}
    return {"op_type": "OBJECT_METADATA", "qual_table": "BOUNDS.TYPES", "columns": cols}


def b64(b):
    return base64.b64encode(bytes(b)).decode()


# Strings at the 16-character cut: equal for 16 characters and apart
# after, multibyte characters across the cut, the largest code point
# (no upper bound can be made by incrementing it), high bytes first.
LONG = [
    "aaaaaaaaaaaaaaaaZ", "aaaaaaaaaaaaaaaab", "aaaaaaaaaaaaaaa\u00e9\u00e9", "aaaaaaaaaaaaaaa\U0001f680x",
    "\u00e9" * 17, "\U0001f680" * 17, "\U0010ffff" * 17, "\u00ff\u00ff", "\u0080", "zzzzzzzzzzzzzzzzzzzz",
    "short", "", "A", "\u4e2d\u6587\u5b57\u7b26\u4e32\u4e2d\u6587\u5b57\u7b26\u4e32\u4e2d\u6587\u5b57\u7b26\u4e32\u4e2d\u6587",
]
BINS = [[0x00], [0x7f], [0x80], [0xff], [0x01] * 20, [0x81] * 20, [0xff] * 20, [0xff] * 16 + [0x00], [],
        [0x7f, 0xff, 0xff], [0x80, 0x00]]


def row(i, day, hour, vals, op="INSERT"):
    after = {"ID": i, **vals}
    return {"qual_table": "BOUNDS.TYPES", "op_type": op, "op_ts": f"2026-07-{13 + day:02d}T{hour:02d}:{i % 60:02d}:00.{i:06d}Z",
            "xid": f"x{i}", "pos": f"B-{i:06d}", "after": after}


def dec(digits, scale, neg):
    ip = rng.randrange(10 ** (digits - scale)) if digits > scale else 0
    fp = rng.randrange(10 ** scale)
    s = f"{ip}.{fp:0{scale}d}" if scale else str(ip)
    return float(("-" if neg else "") + s) if digits <= 15 else ("-" if neg else "") + s


out = [meta()]
i = 0
# Day 0: the extremes, few rows (dictionary pages).
extremes = [
    {"I64": 9223372036854775807, "D4": 99.99, "D18": "99999999999999.9999", "D20": "999999999999999999.99",
     "D38": "9999999999999999999999999999.9999999999", "F": "Infinity", "S": LONG[6], "B": b64(BINS[6]),
     "DAY": "9999-12-31", "TS": "9999-12-31T23:59:59.999999Z", "FL": True},
    {"I64": -9223372036854775808, "D4": -99.99, "D18": "-99999999999999.9999", "D20": "-999999999999999999.99",
     "D38": "-9999999999999999999999999999.9999999999", "F": "-Infinity", "S": "", "B": b64([]),
     "DAY": "0001-01-01", "TS": "0001-01-02T00:00:00Z", "FL": True},
    {"I64": 0, "D4": 0, "D18": "0", "D20": "0", "D38": "0", "F": -0.0, "S": LONG[7], "B": b64(BINS[3]),
     "DAY": "1969-12-31", "TS": "1969-12-31T23:59:59.999999Z", "FL": True},
    {"I64": -1, "D4": -0.01, "D18": "-0.0001", "D20": "-0.01", "D38": "-0.0000000001", "F": 5e-324, "S": LONG[8],
     "B": b64(BINS[2]), "DAY": "1970-01-01", "TS": "1970-01-01T00:00:00Z", "FL": True},
]
for v in extremes:
    i += 1
    out.append(row(i, 0, 1, {**v, "N": None}))
# Day 1: many distinct values (plain pages), strings at the cut, zeros of
# both signs, high bytes.
for k in range(120):
    i += 1
    neg = k % 2 == 0
    out.append(row(i, 1, 2, {
        "I64": rng.randrange(-10 ** 12, 10 ** 12), "D4": dec(4, 2, neg), "D18": dec(18, 4, neg), "D20": dec(20, 2, neg),
        "D38": dec(38, 10, neg), "F": [0.0, -0.0, rng.uniform(-1e6, 1e6)][k % 3],
        "S": LONG[k % len(LONG)] + ("" if k < len(LONG) else str(k)), "B": b64(BINS[k % len(BINS)] + [k]),
        "DAY": f"{1900 + k:04d}-0{1 + k % 9}-1{k % 10}", "TS": f"{1950 + k:04d}-01-02T03:04:05.{k:06d}Z",
        "FL": k % 3 == 0, "N": None}))
# Day 2: NaN among other values, in the middle of the file.
for k in range(30):
    i += 1
    out.append(row(i, 2, 3, {
        "I64": k - 15, "D4": dec(4, 2, k % 3 == 0), "D18": dec(18, 4, False), "D20": dec(20, 2, True),
        "D38": dec(38, 10, k % 2 == 0), "F": "NaN" if k in (7, 8, 20) else float(k * 10 - 100),
        # The last value passes Parquet's 4 KiB statistics limit: its row
        # group has a min and no max.
        "S": "n" * 4200 if k == 29 else "m" + "\u00e9" * (k % 20), "B": b64([0x80 + k] * (k % 20)), "DAY": f"2026-07-{1 + k % 28:02d}",
        "TS": f"2026-07-15T00:00:{k:02d}.5Z", "FL": False, "N": None}))
# Day 3: repeated values (dictionary pages) and nulls.
for k in range(100):
    i += 1
    out.append(row(i, 3, 4, {
        "I64": [5, 7, 5000000000][k % 3], "D4": [1.5, -2.25][k % 2], "D18": "12.3400", "D20": ["1.00", None][k % 2],
        "D38": None, "F": [None, 1.25, 2.5][k % 3], "S": ["same", "same", None, "another value that is long"][k % 4],
        "B": [None, b64([1, 2, 3])][k % 2], "DAY": None, "TS": ["2000-02-29T12:00:00Z", None][k % 2], "FL": None,
        "N": None}))
for r in out:
    print(json.dumps(r, ensure_ascii=False))
