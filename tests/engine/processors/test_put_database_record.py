"""PutDatabaseRecord against a real PostgreSQL: every statement type, name translation, types
written through casts, one transaction per FlowFile (a FlowFile whose fifth record violates a
constraint commits nothing), failure versus retry, Rollback On Failure, the database going away
and a refused tenant."""

from __future__ import annotations

import datetime as dt
import json
import threading
from decimal import Decimal

import pytest

from engine.confinement import ConfinementSettings
from engine.testing import ProcessorTestRunner
from tests.databases import TcpRelay, scratch_database


@pytest.fixture(scope="module")
def db():
    yield from scratch_database("putdbrecord")


@pytest.fixture
def table(db, request):
    name = f"people_{request.node.name[5:25]}".lower()
    db.execute(f"""DROP TABLE IF EXISTS {name};
        CREATE TABLE {name} (id integer PRIMARY KEY, full_name text NOT NULL CHECK (full_name <> ''),
            born date, seen timestamptz, balance numeric(10, 2), photo bytea, profile jsonb, tags text[],
            created timestamp DEFAULT now())""")
    return name


def runner(tmp_path, db, properties, *, service=None, **options):
    return ProcessorTestRunner(
        "PutDatabaseRecord", tmp_path,
        {"Database Connection Pooling Service": "pool", "Record Reader": "reader", **properties},
        services={"pool": ("DBCPConnectionPool", service or db.pool_properties()), "reader": ("JsonTreeReader", {})},
        **options)


def content(*records) -> bytes:
    return json.dumps(list(records)).encode()


def person(i, **extra):
    return {"id": i, "full_name": f"person {i}", **extra}


def rows(db, table, columns="id, full_name"):
    return db.execute(f"SELECT {columns} FROM {table} ORDER BY id")


def test_insert_writes_every_record_with_its_types(tmp_path, db, table):
    record = person(1, born="1990-05-17", seen="2024-02-29T10:00:00Z", balance=12.5, photo="aGk=",
                    profile={"langs": ["en", "fr"], "age": 33}, tags=["a", "b"])
    properties = {"Statement Type": "INSERT", "Table Name": table, "Binary String Format": "Base64"}
    with runner(tmp_path, db, properties) as run:
        run.enqueue(content(record, person(2)))
        run.run()
        (out,) = run.output("success")
        assert [e.event_type.value for e in run.events() if e.event_type.value == "SEND"] == ["SEND"]
    (first, second) = rows(db, table, "id, full_name, born, seen, balance, photo, profile, tags")
    assert first == (1, "person 1", dt.date(1990, 5, 17), dt.datetime(2024, 2, 29, 10, tzinfo=dt.timezone.utc),
                     Decimal("12.50"), b"hi", {"langs": ["en", "fr"], "age": 33}, ["a", "b"])
    assert second == (2, "person 2", None, None, None, None, None, None)


def test_translated_field_names_match_columns(tmp_path, db, table):
    with runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table}) as run:
        run.enqueue(content({"ID": 1, "FullName": "translated"}))
        run.run()
        assert len(run.output("success")) == 1
    assert rows(db, table) == [(1, "translated")]


def test_unmatched_fields_and_required_columns(tmp_path, db, table):
    with runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table,
                               "Unmatched Field Behavior": "Fail on Unmatched Fields"}) as run:
        run.enqueue(content(person(1, nickname="x")))
        run.run()
        (failed,) = run.output("failure")
        assert "Cannot map field 'nickname'" in failed.attributes["putdatabaserecord.error"]
    with runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table}) as run:
        run.enqueue(content({"id": 1}))
        run.run()
        (failed,) = run.output("failure")
        assert "Required column 'full_name'" in failed.attributes["putdatabaserecord.error"]
    assert rows(db, table) == []


def test_update_upsert_insert_ignore_and_delete(tmp_path, db, table):
    db.execute(f"INSERT INTO {table} (id, full_name) VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    with runner(tmp_path, db, {"Statement Type": "UPDATE", "Table Name": table}) as run:
        run.enqueue(content({"id": 2, "full_name": "TWO"}))
        run.run()
    with runner(tmp_path, db, {"Statement Type": "UPSERT", "Table Name": table}) as run:
        run.enqueue(content({"id": 3, "full_name": "THREE"}, {"id": 4, "full_name": "four"}))
        run.run()
    with runner(tmp_path, db, {"Statement Type": "INSERT_IGNORE", "Table Name": table}) as run:
        run.enqueue(content({"id": 4, "full_name": "ignored"}, {"id": 5, "full_name": "five"}))
        run.run()
    with runner(tmp_path, db, {"Statement Type": "DELETE", "Table Name": table, "Delete Keys": "id"}) as run:
        run.enqueue(content({"id": 1, "full_name": "whatever"}))
        run.run()
        assert len(run.output("success")) == 1
    assert rows(db, table) == [(2, "TWO"), (3, "THREE"), (4, "four"), (5, "five")]


def test_the_statement_type_attribute_and_sql_statements(tmp_path, db, table):
    with runner(tmp_path, db, {"Statement Type": "Use statement.type Attribute", "Table Name": table,
                               "Field Containing SQL": "sql", "Allow Multiple SQL Statements": "true"}) as run:
        run.enqueue(content(person(1)), **{"statement.type": "insert"})
        run.enqueue(content({"sql": f"UPDATE {table} SET full_name = 'via sql'; "
                                    f"INSERT INTO {table} (id, full_name) VALUES (9, 'nine')"}),
                    **{"statement.type": "SQL"})
        run.enqueue(content(person(2)), **{"statement.type": "MERGE"})
        run.run(3)
        assert len(run.output("success")) == 2
        (failed,) = run.output("failure")
        assert "not 'MERGE'" in failed.attributes["putdatabaserecord.error"]
    assert rows(db, table) == [(1, "via sql"), (9, "nine")]


def test_a_fifth_record_violating_a_constraint_commits_nothing_of_its_flowfile(tmp_path, db, table):
    records = [person(i) for i in range(1, 5)] + [{"id": 5, "full_name": ""}] + [person(6)]
    with runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table, "Maximum Batch Size": "2"}) as run:
        run.enqueue(content(*records), filename="bad")
        run.enqueue(content(person(10)), filename="good")
        run.run(2)
        (failed,) = run.output("failure")
        assert failed.attributes["filename"] == "bad"
        assert "violates check constraint" in failed.attributes["putdatabaserecord.error"]
        assert "23514" in failed.attributes["putdatabaserecord.error"]
        assert [f.attributes["filename"] for f in run.output("success")] == ["good"]
        assert any("routing to failure" in b for b in run.bulletins)
    assert rows(db, table) == [(10, "person 10")]


def test_rollback_on_failure_keeps_the_flowfile_queued(tmp_path, db, table):
    db.execute(f"INSERT INTO {table} (id, full_name) VALUES (1, 'one')")
    with runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table,
                               "Rollback On Failure": "true"}) as run:
        run.enqueue(content(person(2), person(1)))
        run.run()
        assert not run.output("failure") and not run.output("success")
        assert len(run.input_flowfiles()) == 1
        assert any("Rollback On Failure" in b for b in run.bulletins)
    assert rows(db, table) == [(1, "one")]


def test_unreadable_records_go_to_failure(tmp_path, db, table):
    with runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table}) as run:
        run.enqueue(b"[{not json")
        run.run()
        assert len(run.output("failure")) == 1


def test_the_database_going_away_routes_to_retry_and_loses_nothing(tmp_path, db, table):
    relay = TcpRelay(db.host, db.port)
    try:
        service = db.pool_properties("127.0.0.1", relay.port, **{"Max Wait Time": "2 sec"})
        with runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table}, service=service) as run:
            run.enqueue(content(person(1)))
            run.run()
            relay.cut()
            run.enqueue(content(person(2), person(3)))
            run.run()
            (retry,) = run.output("retry")
            assert "server closed the connection" in retry.attributes["putdatabaserecord.error"]
            assert any(f"127.0.0.1:{relay.port}" in b and "routing to retry" in b for b in run.bulletins)
            assert rows(db, table) == [(1, "person 1")]
            relay.restore()
            run.enqueue(run.content(retry))  # what a retry loop back to the processor does
            run.run()
            assert len(run.output("success")) == 2
        assert rows(db, table) == [(1, "person 1"), (2, "person 2"), (3, "person 3")]
    finally:
        relay.close()


def test_a_tenant_without_the_grant_is_refused(tmp_path, db, table):
    with pytest.raises(Exception, match="tenant acme's network allowlist does not open"):
        runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table}, tenant={},
               confinement=ConfinementSettings())


def test_autocommit_and_a_record_path_statement_type_without_its_path_are_refused_with_the_reason(
        tmp_path, db, table):
    with runner(tmp_path, db, {"Statement Type": "Use Record Path", "Table Name": table,
                               "Database Session AutoCommit": "true", "Data Record Path": "/a["}) as run:
        problems = " | ".join(run.validate())
        assert "'Statement Type Record Path' is required" in problems
        assert "'Data Record Path'" in problems and "at position 3" in problems
    with runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table,
                               "Database Session AutoCommit": "true"}) as run:
        assert "'Database Session AutoCommit' must be false" in " | ".join(run.validate())


def test_change_events_use_their_operation_and_after_record_in_order(tmp_path, db, table):
    events = [{"op": "c", "after": person(1)}, {"op": "r", "after": person(2)},
              {"op": "u", "after": {"id": 1, "full_name": "first"}}, {"op": "d", "after": person(2)},
              {"op": "UPSERT", "after": {"id": 3, "full_name": "third"}}]
    properties = {"Statement Type": "Use Record Path", "Statement Type Record Path": "/op",
                  "Data Record Path": "/after", "Delete Keys": "id", "Table Name": table, "Maximum Batch Size": "1"}
    with runner(tmp_path, db, properties) as run:
        assert run.validate() == []
        run.enqueue(content(*events))
        run.run()
        assert len(run.output("success")) == 1
    assert rows(db, table) == [(1, "first"), (3, "third")]


def test_a_data_record_path_may_select_several_records(tmp_path, db, table):
    properties = {"Statement Type": "INSERT", "Data Record Path": "/people[*]", "Table Name": table}
    with runner(tmp_path, db, properties) as run:
        run.enqueue(content({"batch": 1, "people": [person(1), person(2)]}, {"batch": 2, "people": [person(3)]}))
        run.run()
        assert len(run.output("success")) == 1
    assert rows(db, table) == [(1, "person 1"), (2, "person 2"), (3, "person 3")]


@pytest.mark.parametrize(("records", "message"), [
    ([{"op": "c", "after": person(1)}, {"op": "x", "after": person(2)}],
     "Evaluated RecordPath /op against a record to determine the statement type but found 'x'"),
    ([{"after": person(1)}], "found 'null'"),
    ([{"op": "c", "after": person(1)}, {"op": "c", "after": "not a record"}],
     "RecordPath /after evaluated against a record is expected to return one or more records but gave a str"),
])
def test_a_record_whose_paths_give_no_statement_or_record_fails_the_flowfile_and_writes_nothing(
        tmp_path, db, table, records, message):
    properties = {"Statement Type": "Use Record Path", "Statement Type Record Path": "/op",
                  "Data Record Path": "/after", "Table Name": table}
    with runner(tmp_path, db, properties) as run:
        run.enqueue(json.dumps(records).encode())
        run.run()
        (failed,) = run.output("failure")
        assert message in failed.attributes["putdatabaserecord.error"]
    assert rows(db, table) == []


def test_the_database_going_away_during_the_transaction_commits_nothing(tmp_path, db, table):
    relay = TcpRelay(db.host, db.port)
    try:
        service = db.pool_properties("127.0.0.1", relay.port, **{"Max Wait Time": "2 sec"})
        with runner(tmp_path, db, {"Statement Type": "INSERT", "Table Name": table,
                                   "Post-Processing SQL": "SELECT pg_sleep(2)"}, service=service) as run:
            run.enqueue(content(person(1), person(2)))
            cutter = threading.Timer(0.8, relay.cut)
            cutter.start()
            run.run()
            cutter.join()
            (retry,) = run.output("retry")
            assert json.loads(run.content(retry)) == [person(1), person(2)]
    finally:
        relay.close()
    assert rows(db, table) == []
