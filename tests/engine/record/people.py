"""Records the RecordPath tests share: NiFi's RecordPath-guide record ("John Doe") and two more with
nulls, empty arrays and values that do not parse, as a pyarrow table with an explicit schema."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

UTC = dt.timezone.utc

ADDRESS = pa.struct([("number", pa.string()), ("street", pa.string()), ("city", pa.string()),
                     ("state", pa.string()), ("zip", pa.string())])
ITEM = pa.struct([("sku", pa.string()), ("qty", pa.int64())])
SCHEMA = pa.schema([
    ("name", pa.string()), ("age", pa.int64()), ("score", pa.float64()), ("active", pa.bool_()),
    ("workAddress", ADDRESS), ("homeAddress", ADDRESS),
    ("details", pa.struct([("position", pa.string()), ("preferredState", pa.string()), ("employer", pa.string()),
                           ("vehicle", pa.string()), ("phrase", pa.string())])),
    ("tags", pa.list_(pa.string())), ("numbers", pa.list_(pa.int64())),
    ("orders", pa.list_(pa.struct([("id", pa.string()), ("total", pa.float64()), ("items", pa.list_(ITEM))]))),
    ("attrs", pa.map_(pa.string(), pa.string())),
    ("contacts", pa.list_(pa.struct([("kind", pa.string()), ("value", pa.string())]))),
    ("born", pa.timestamp("ms", tz="UTC")), ("day", pa.date32()), ("payload", pa.binary()),
    ("eventDate", pa.string()), ("millis", pa.int64()),
])

JOHN = {
    "name": "John Doe", "age": 42, "score": 3.5, "active": True,
    "workAddress": {"number": "123", "street": "5th Avenue", "city": "New York", "state": "NY", "zip": "10020"},
    "homeAddress": {"number": "456", "street": "Grand St", "city": "Jersey City", "state": "NJ", "zip": "07304"},
    "details": {"position": "Dataflow Engineer", "preferredState": "NY", "employer": "", "vehicle": None,
                "phrase": "   "},
    "tags": ["a", "b", None, "d"], "numbers": [1, 5, 10],
    "orders": [{"id": "o1", "total": 10.5, "items": [{"sku": "x", "qty": 1}, {"sku": "y", "qty": 2}]},
               {"id": "o2", "total": 99.0, "items": []}],
    "attrs": [("color", "red"), ("size", "L")],
    "contacts": [{"kind": "email", "value": "john@example.com"}, {"kind": "phone", "value": None}],
    "born": dt.datetime(1980, 5, 17, 10, 30, tzinfo=UTC), "day": dt.date(2017, 10, 20), "payload": b"Hello",
    "eventDate": "2017-10-20T00:00:00Z", "millis": 1508457600000,
}
JANE = {
    "name": "Jane Roe", "age": 7, "score": None, "active": False, "workAddress": None,
    "homeAddress": {"number": "9", "street": "Elm St", "city": "Albany", "state": "NY", "zip": "12207"},
    "details": {"position": "", "preferredState": "NJ", "employer": "Acme", "vehicle": "bike", "phrase": "hi"},
    "tags": [], "numbers": [3], "orders": [{"id": "o3", "total": None, "items": [{"sku": "z", "qty": 5}]}],
    "attrs": [("color", "blue")], "contacts": [], "born": None, "day": None, "payload": None,
    "eventDate": "2000-01-02T03:04:05Z", "millis": None,
}
NOBODY = {
    "name": None, "age": None, "score": 1e20, "active": None,
    "workAddress": {"number": None, "street": None, "city": None, "state": None, "zip": None},
    "homeAddress": None, "details": None, "tags": None, "numbers": None, "orders": None, "attrs": None,
    "contacts": None,
    "born": dt.datetime(2017, 10, 20, tzinfo=UTC), "day": dt.date(1970, 1, 1), "payload": b"",
    "eventDate": "not a date", "millis": 0,
}
RECORDS = [JOHN, JANE, NOBODY]


def table() -> pa.Table:
    """The three records as a table of SCHEMA."""
    return pa.Table.from_pylist(RECORDS, schema=SCHEMA)


def rows() -> list[dict]:
    """The records as ``to_pylist()`` gives them (fresh copies: tests may change them)."""
    return table().to_pylist()
