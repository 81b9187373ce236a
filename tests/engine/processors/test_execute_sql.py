"""ExecuteSQL against a real PostgreSQL (a scratch database on the suite's server): NiFi's Avro
for each column type, splitting, batches, pre/post queries, failures, the database going away,
and a tenant refused the database."""

from __future__ import annotations

import datetime as dt
import io
import threading
from decimal import Decimal

import fastavro
import pytest

from engine.confinement import ConfinementSettings
from engine.testing import ProcessorTestRunner
from tests.databases import TcpRelay, scratch_database


@pytest.fixture(scope="module")
def db():
    yield from scratch_database("executesql")


@pytest.fixture(scope="module", autouse=True)
def tables(db):
    db.execute("""
        CREATE TABLE kinds (id integer PRIMARY KEY, small smallint, big bigint, price numeric(10, 2),
            loose numeric, ratio real, score double precision, flag boolean, day date, at time,
            local_ts timestamp, zoned_ts timestamptz, data bytea, doc json, docb jsonb, tags text[],
            ints integer[], name varchar(20), ident uuid);
        INSERT INTO kinds VALUES (1, 2, 9000000000, 12.35, 1.5, 0.5, 2.25, true, '2024-02-29', '13:14:15.678',
            '2024-02-29 13:14:15.678', '2024-02-29 13:14:15.5+02', '\\x00ff10', '{"a": [1, 2]}', '{"b": true}',
            '{x,"y z"}', '{1,2,3}', 'hello', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
        INSERT INTO kinds (id) VALUES (2);
        CREATE TABLE numbers (n integer PRIMARY KEY);
        INSERT INTO numbers SELECT generate_series(1, 25);
    """)


def runner(tmp_path, db, properties=None, *, service=None, input=True, **options):
    return ProcessorTestRunner("ExecuteSQL", tmp_path, {"Database Connection Pooling Service": "pool",
                                                        **(properties or {})},
                               services={"pool": ("DBCPConnectionPool", service or db.pool_properties())},
                               input=input, **options)


def records(data: bytes) -> tuple[dict, list[dict]]:
    reader = fastavro.reader(io.BytesIO(data))
    return reader.writer_schema, list(reader)


def test_every_type_is_written_as_nifi_writes_it_without_logical_types(tmp_path, db):
    with runner(tmp_path, db, {"SQL Query": "SELECT * FROM kinds ORDER BY id"}, input=False) as run:
        run.run()
        (out,) = run.output("success")
        schema, rows = records(run.content(out))
        assert schema["name"] == "any.data.kinds"
        types = {field["name"]: field["type"] for field in schema["fields"]}
        assert types == {"id": ["null", "int"], "small": ["null", "int"], "big": ["null", "long"],
                         "price": ["null", "string"], "loose": ["null", "string"], "ratio": ["null", "float"],
                         "score": ["null", "double"], "flag": ["null", "boolean"], "day": ["null", "string"],
                         "at": ["null", "string"], "local_ts": ["null", "string"], "zoned_ts": ["null", "string"],
                         "data": ["null", "bytes"], "doc": ["null", "string"], "docb": ["null", "string"],
                         "tags": ["null", "bytes"], "ints": ["null", "bytes"], "name": ["null", "string"],
                         "ident": ["null", "string"]}
        assert rows[0] == {"id": 1, "small": 2, "big": 9000000000, "price": "12.35", "loose": "1.5", "ratio": 0.5,
                           "score": 2.25, "flag": True, "day": "2024-02-29", "at": "13:14:15",
                           "local_ts": "2024-02-29 13:14:15.678", "zoned_ts": "2024-02-29 11:14:15.5",
                           "data": b"\x00\xff\x10", "doc": '{"a": [1, 2]}', "docb": '{"b": true}',
                           "tags": b'{x,"y z"}', "ints": b"{1,2,3}", "name": "hello",
                           "ident": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}
        assert rows[1] == {name: (2 if name == "id" else None) for name in types}
        assert out.attributes["executesql.row.count"] == "2"
        assert out.attributes["executesql.resultset.index"] == "0"
        for name in ("executesql.query.duration", "executesql.query.executiontime", "executesql.query.fetchtime"):
            assert int(out.attributes[name]) >= 0
        assert [e.event_type.value for e in run.events()] == ["RECEIVE"]


def test_logical_types_give_decimals_dates_times_and_timestamps(tmp_path, db):
    query = "SELECT price, loose, day, at, local_ts, zoned_ts FROM kinds WHERE id = 1"
    with runner(tmp_path, db, {"SQL Query": query, "Use Avro Logical Types": "true",
                               "Default Decimal Scale": "3"}, input=False) as run:
        run.run()
        schema, (row,) = records(run.content(run.output("success")[0]))
        types = {field["name"]: field["type"][1] for field in schema["fields"]}
        assert types["price"] == {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
        assert types["loose"] == {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 3}
        assert types["day"] == {"type": "int", "logicalType": "date"}
        assert types["at"] == {"type": "int", "logicalType": "time-millis"}
        assert types["zoned_ts"] == {"type": "long", "logicalType": "timestamp-millis"}
        utc = dt.timezone.utc
        assert row == {"price": Decimal("12.35"), "loose": Decimal("1.500"), "day": dt.date(2024, 2, 29),
                       "at": dt.time(13, 14, 15, 678000),
                       "local_ts": dt.datetime(2024, 2, 29, 13, 14, 15, 678000, tzinfo=utc),
                       "zoned_ts": dt.datetime(2024, 2, 29, 11, 14, 15, 500000, tzinfo=utc)}


def test_the_content_is_the_query_and_the_result_is_split_into_fragments(tmp_path, db):
    with runner(tmp_path, db, {"Max Rows Per FlowFile": "10", "Normalize Table and Column Names": "true"}) as run:
        incoming = run.enqueue(b"SELECT n AS \"my n\" FROM numbers ORDER BY n", filename="q.sql")
        run.run()
        outs = run.output("success")
        assert [o.attributes["executesql.row.count"] for o in outs] == ["10", "10", "5"]
        assert [o.attributes["fragment.index"] for o in outs] == ["0", "1", "2"]
        assert {o.attributes["fragment.count"] for o in outs} == {"3"}
        assert len({o.attributes["fragment.identifier"] for o in outs}) == 1
        assert {o.attributes["input.flowfile.uuid"] for o in outs} == {incoming.uuid}
        assert {o.attributes["filename"] for o in outs} == {"q.sql"}
        values = [r["my_n"] for o in outs for r in records(run.content(o))[1]]
        assert values == list(range(1, 26))
        assert not run.input_flowfiles()
        assert [e.event_type.value for e in run.events(event_type="FETCH")] == ["FETCH"] * 3


def test_fetch_size_reads_through_a_server_side_cursor(tmp_path, db):
    with runner(tmp_path, db, {"SQL Query": "SELECT n FROM numbers ORDER BY n", "Fetch Size": "4",
                               "Max Rows Per FlowFile": "25"}, input=False) as run:
        run.run()
        outs = run.output("success")
        assert [o.attributes["executesql.row.count"] for o in outs] == ["25"]
        assert [r["n"] for r in records(run.content(outs[0]))[1]] == list(range(1, 26))


def test_output_batch_size_commits_as_it_goes_and_writes_no_fragment_count(tmp_path, db):
    with runner(tmp_path, db, {"SQL Query": "SELECT n FROM numbers", "Max Rows Per FlowFile": "5",
                               "Output Batch Size": "2"}) as run:
        run.enqueue(b"")
        run.run()
        outs = run.output("success")
        assert len(outs) == 5
        assert all("fragment.count" not in o.attributes for o in outs)
        assert not run.input_flowfiles()


def test_pre_and_post_queries_and_several_result_sets(tmp_path, db):
    props = {"SQL Pre-Query": "SET LOCAL search_path TO public; SELECT 'a\\;b'",
             "SQL Query": "SELECT count(*) AS c FROM numbers; SELECT 'x' AS y",
             "SQL Post-Query": "SELECT 2"}
    with runner(tmp_path, db, props, input=False) as run:
        run.run()
        first, second = run.output("success")
        assert records(run.content(first))[1] == [{"c": 25}]
        assert records(run.content(second))[1] == [{"y": "x"}]
        assert second.attributes["executesql.resultset.index"] == "1"


def test_a_statement_without_result_set_gives_an_empty_avro_or_the_original(tmp_path, db):
    db.execute("CREATE TABLE IF NOT EXISTS log (line text)")
    with runner(tmp_path, db, {"SQL Query": "INSERT INTO log VALUES ('a')"}) as run:
        run.enqueue(b"kept content")
        run.run()
        (out,) = run.output("success")
        assert out.attributes["executesql.row.count"] == "0"
        assert records(run.content(out))[1] == []
    with runner(tmp_path, db, {"SQL Query": "INSERT INTO log VALUES ('b')",
                               "Content Output Strategy": "ORIGINAL"}) as run:
        run.enqueue(b"kept content")
        run.run()
        (out,) = run.output("success")
        assert run.content(out) == b"kept content"
    assert db.execute("SELECT line FROM log ORDER BY line") == [("a",), ("b",)]


def test_a_failing_query_routes_the_flowfile_to_failure_with_the_message(tmp_path, db):
    with runner(tmp_path, db, {"SQL Query": "SELECT * FROM no_such_table"}) as run:
        run.enqueue(b"", filename="x")
        run.run()
        (failed,) = run.output("failure")
        assert 'relation "no_such_table" does not exist' in failed.attributes["executesql.error.message"]
        assert "42P01" in failed.attributes["executesql.error.message"]
        assert not run.output("success")
        assert any("no_such_table" in b for b in run.bulletins)


def test_a_failing_post_query_loses_the_results(tmp_path, db):
    with runner(tmp_path, db, {"SQL Query": "SELECT n FROM numbers", "SQL Post-Query": "SELECT 1/0"}) as run:
        run.enqueue(b"")
        run.run()
        assert not run.output("success")
        (failed,) = run.output("failure")
        assert "division by zero" in failed.attributes["executesql.error.message"]


def test_max_wait_time_stops_a_long_query(tmp_path, db):
    with runner(tmp_path, db, {"SQL Query": "SELECT pg_sleep(5)", "Max Wait Time": "1 sec"}) as run:
        run.enqueue(b"")
        run.run()
        (failed,) = run.output("failure")
        assert "statement timeout" in failed.attributes["executesql.error.message"]


def test_the_database_going_away_keeps_the_flowfile_queued_and_says_so(tmp_path, db):
    relay = TcpRelay(db.host, db.port)
    try:
        service = db.pool_properties("127.0.0.1", relay.port, **{"Max Wait Time": "2 sec"})
        with runner(tmp_path, db, {"SQL Query": "SELECT n FROM numbers"}, service=service) as run:
            run.enqueue(b"", filename="first")
            run.run()
            assert len(run.output("success")) == 1
            relay.cut()
            run.enqueue(b"", filename="second")
            run.run()
            assert not run.output("failure")
            assert [f.attributes["filename"] for f in run.input_flowfiles()] == ["second"]
            assert any(f"127.0.0.1:{relay.port}" in b and "tried again" in b for b in run.bulletins), run.bulletins
            relay.restore()
            run.clock.advance(60)
            run.run()
            assert len(run.output("success")) == 2
            assert not run.input_flowfiles()
    finally:
        relay.close()


def test_a_tenant_without_the_grant_is_refused_the_database(tmp_path, db):
    with pytest.raises(Exception, match="tenant acme's network allowlist does not open"):
        runner(tmp_path, db, {"SQL Query": "SELECT 1"}, input=False, tenant={},
               confinement=ConfinementSettings())


def test_a_tenant_whose_allowlist_opens_the_database_reaches_it(tmp_path, db):
    tenant = {"network": {"allow": [f"{db.host}:{db.port}"]}}
    with runner(tmp_path, db, {"SQL Query": "SELECT 7 AS seven"}, input=False, tenant=tenant,
                confinement=ConfinementSettings()) as run:
        run.run()
        assert records(run.content(run.output("success")[0]))[1] == [{"seven": 7}]


def test_the_platforms_own_database_is_refused_even_when_allowlisted(tmp_path, db):
    tenant = {"network": {"allow": [f"{db.host}:{db.port}"]}}
    settings = ConfinementSettings(platform_addresses=(f"{db.host}:{db.port}",))
    with pytest.raises(Exception, match="one of the platform's own services"):
        runner(tmp_path, db, {"SQL Query": "SELECT 1"}, input=False, tenant=tenant, confinement=settings)


def test_the_database_going_away_during_the_query_keeps_the_flowfile_queued(tmp_path, db):
    relay = TcpRelay(db.host, db.port)
    try:
        service = db.pool_properties("127.0.0.1", relay.port, **{"Max Wait Time": "2 sec"})
        with runner(tmp_path, db, {"SQL Query": "SELECT n, pg_sleep(0.1) FROM numbers"}, service=service) as run:
            run.enqueue(b"", filename="interrupted")
            cutter = threading.Timer(0.8, relay.cut)
            cutter.start()
            run.run()
            cutter.join()
            assert not run.output("success") and not run.output("failure")
            assert [f.attributes["filename"] for f in run.input_flowfiles()] == ["interrupted"]
            assert any("tried again" in b for b in run.bulletins), run.bulletins
            relay.restore()
            run.clock.advance(60)
            run.run()
            (out,) = run.output("success")
            assert out.attributes["executesql.row.count"] == "25"
    finally:
        relay.close()


def test_nifi_1_property_names_load_as_the_current_ones(tmp_path, db):
    with runner(tmp_path, db, {"SQL select query": "SELECT n FROM numbers", "esql-max-rows": "20",
                               "dbf-normalize": "true"}, input=False) as run:
        assert run.validate() == []
        run.run()
        assert [o.attributes["executesql.row.count"] for o in run.output("success")] == ["20", "5"]


def _args(*arguments) -> dict[str, str]:
    """sql.args attributes for (type, value[, format]) triples, numbered from 1."""
    attributes = {}
    for index, (jdbc_type, value, *value_format) in enumerate(arguments, 1):
        attributes[f"sql.args.{index}.type"] = str(jdbc_type)
        if value is not None:
            attributes[f"sql.args.{index}.value"] = value
        if value_format:
            attributes[f"sql.args.{index}.format"] = value_format[0]
    return attributes


def test_sql_args_bind_the_placeholders_in_order_with_their_jdbc_types(tmp_path, db):
    query = ("SELECT ?::int AS i, ?::bigint AS b, ?::numeric(10,2) AS d, ?::double precision AS f, "
             "?::boolean AS t, ?::varchar AS s, ?::date AS day, ?::timestamp AS ts, ?::bytea AS raw, "
             "?::bytea AS hex, ?::bytea AS txt, ?::timestamp AS pat, ?::date AS iso, ?::time AS tm, "
             "?::int AS nothing, 'it''s 100% ?' AS lit, '{\"a\": 1}'::jsonb ?? 'a' AS has")
    attributes = _args((4, "42"), (-5, "9000000000"), (3, "12.345"), (8, "2.5"), (16, "TRUE"), (12, "héllo"),
                       (91, "2024-02-29"), (93, "2024-02-29 13:14:15.678"), (-3, "AP8Q", "base64"),
                       (-2, "00FF10", "hex"), (-4, "ab"), (93, "29/02/2024 13:14:15.250", "dd/MM/yyyy HH:mm:ss.SSS"),
                       (91, "2024-02-29T10:00:00+05:00", "ISO_OFFSET_DATE_TIME"), (92, "3600000"), (4, None))
    with runner(tmp_path, db, {"SQL Query": query, "Use Avro Logical Types": "true"}) as run:
        run.enqueue(b"", **attributes)
        run.run()
        (out,) = run.output("success")
        (row,) = records(run.content(out))[1]
        utc = dt.timezone.utc
        assert row == {"i": 42, "b": 9000000000, "d": Decimal("12.35"), "f": 2.5, "t": True, "s": "héllo",
                       "day": dt.date(2024, 2, 29), "ts": dt.datetime(2024, 2, 29, 13, 14, 15, 678000, tzinfo=utc),
                       "raw": b"\x00\xff\x10", "hex": b"\x00\xff\x10", "txt": b"ab",
                       "pat": dt.datetime(2024, 2, 29, 13, 14, 15, 250000, tzinfo=utc),
                       "iso": dt.date(2024, 2, 29), "tm": dt.time(1, 0), "nothing": None, "lit": "it's 100% ?",
                       "has": True}


def test_sql_args_from_properties_are_overridden_by_attributes(tmp_path, db):
    props = {"SQL Query": "SELECT n FROM numbers WHERE n BETWEEN ? AND ? ORDER BY n",
             "sql.args.1.type": "4", "sql.args.1.value": "3", "sql.args.2.type": "4", "sql.args.2.value": "5"}
    with runner(tmp_path, db, props) as run:
        assert run.validate() == []
        run.enqueue(b"")
        run.enqueue(b"", **{"sql.args.2.value": "4"})
        run.run(2)
        first, second = run.output("success")
        assert [r["n"] for r in records(run.content(first))[1]] == [3, 4, 5]
        assert [r["n"] for r in records(run.content(second))[1]] == [3, 4]


@pytest.mark.parametrize(("attributes", "message"), [
    (_args((4, "forty-two")), "The value of the sql.args.1.value is 'forty-two', which cannot be converted"),
    (_args((4, "3000000000")), "out of the range of a 32-bit integer"),
    ({"sql.args.1.type": "INTEGER", "sql.args.1.value": "1"}, "sql.args.1.type attribute is 'INTEGER', which is "
     "not a valid numeral SQL data type"),
    (_args((93, "2024-02-29")), "expected yyyy-MM-dd HH:mm:ss.SSS"),
    (_args((-3, "AP8Q", "octal")), "Unable to parse binary data using the formatter `octal`"),
    (_args((-2, "0G", "hex")), "Hexadecimal decoding failed"),
    (_args((9999, "x")), "sql.args.1.type is 9999, a JDBC type Flowsite cannot bind"),
    ({"sql.args.2.type": "4", "sql.args.2.value": "1"}, "No value specified for parameter 1"),
    (_args((4, "1"), (4, "2")), "the query has 1 '?' placeholder but the sql.args attributes give 2 parameters"),
])
def test_a_bad_sql_arg_routes_the_flowfile_to_failure_saying_why(tmp_path, db, attributes, message):
    with runner(tmp_path, db, {"SQL Query": "SELECT ?::text AS x"}) as run:
        run.enqueue(b"", **attributes)
        run.run()
        assert not run.output("success")
        (failed,) = run.output("failure")
        assert message in failed.attributes["executesql.error.message"]
