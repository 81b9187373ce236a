"""QueryDatabaseTable against a real PostgreSQL: incremental fetching by maximum-value columns
kept in cluster state under NiFi's keys, across processor restarts (no row twice, none missed),
initial maximum values, fragments, and the database going away."""

from __future__ import annotations

import io

import fastavro
import pytest

from engine.components import Scope
from engine.confinement import ConfinementSettings
from engine.testing import ProcessorTestRunner
from tests.databases import TcpRelay, scratch_database


@pytest.fixture(scope="module")
def db():
    yield from scratch_database("querydbtable")


@pytest.fixture
def table(db, request):
    name = f"events_{request.node.name[5:25]}".lower()
    db.execute(f"DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (id integer PRIMARY KEY, label text, "
               f"at timestamp, amount numeric(8, 2))")
    return name


def runner(tmp_path, db, properties, *, service=None, **options):
    return ProcessorTestRunner("QueryDatabaseTable", tmp_path, {"Database Connection Pooling Service": "pool",
                                                                **properties},
                               services={"pool": ("DBCPConnectionPool", service or db.pool_properties())},
                               input=False, **options)


def insert(db, table, first, last):
    db.execute(f"INSERT INTO {table} SELECT i, 'row ' || i, timestamp '2024-01-01' + i * interval '1 minute', "
               f"i * 1.5 FROM generate_series(%s::int, %s::int) AS i", (first, last))


def fetched_ids(run, flowfiles) -> list[int]:
    return [record["id"] for f in flowfiles for record in fastavro.reader(io.BytesIO(run.content(f)))]


def test_each_run_fetches_only_rows_beyond_the_stored_maximum_across_restarts(tmp_path, db, table):
    insert(db, table, 1, 5)
    with runner(tmp_path, db, {"Table Name": table, "Maximum-value Columns": "id"}) as run:
        run.run()
        (first,) = run.output("success")
        assert fetched_ids(run, [first]) == [1, 2, 3, 4, 5]
        assert first.attributes["tablename"] == table
        assert first.attributes["querydbtable.row.count"] == "5"
        assert first.attributes["maxvalue.id"] == "5"
        assert run.state(Scope.CLUSTER).values == {f"{table}@!@id": "5"}
        run.run()  # nothing new: no FlowFile, the state stays
        assert len(run.output("success")) == 1
        insert(db, table, 6, 8)
        run.run()  # a restart: the processor was stopped after each run and reads its state again
        assert fetched_ids(run, run.output("success")[1:]) == [6, 7, 8]
        insert(db, table, 9, 9)
        run.run()
        ids = fetched_ids(run, run.output("success"))
        assert ids == list(range(1, 10))
        assert run.state(Scope.CLUSTER).values == {f"{table}@!@id": "9"}
        assert [e.event_type.value for e in run.events()] == ["RECEIVE"] * 3
        assert run.events()[0].transit_uri == f"jdbc:postgresql://{db.host}:{db.port}/{db.name}"


def test_timestamp_and_decimal_maxima_are_kept_as_nifi_text(tmp_path, db, table):
    insert(db, table, 1, 3)
    with runner(tmp_path, db, {"Table Name": table, "Maximum-value Columns": "at, amount",
                               "Columns to Return": "id, at, amount"}) as run:
        run.run()
        assert run.state(Scope.CLUSTER).values == {f"{table}@!@at": "2024-01-01 00:03:00.0",
                                                   f"{table}@!@amount": "4.50"}
        insert(db, table, 4, 4)
        run.run()
        assert fetched_ids(run, run.output("success")) == [1, 2, 3, 4]


def test_an_initial_maximum_value_skips_older_rows_and_the_where_clause_applies(tmp_path, db, table):
    insert(db, table, 1, 10)
    with runner(tmp_path, db, {"Table Name": table, "Maximum-value Columns": "id", "initial.maxvalue.id": "4",
                               "Additional WHERE clause": "id % 2 = 0"}) as run:
        run.run()
        assert fetched_ids(run, run.output("success")) == [6, 8, 10]


def test_start_at_current_maximum_values_fetches_only_new_rows(tmp_path, db, table):
    insert(db, table, 1, 3)
    with runner(tmp_path, db, {"Table Name": table, "Maximum-value Columns": "id",
                               "Initial Load Strategy": "Start at Current Maximum Values"}) as run:
        run.run()
        assert not run.output("success")
        insert(db, table, 4, 5)
        run.run()
        assert fetched_ids(run, run.output("success")) == [4, 5]


def test_fragments_split_a_run_and_the_maximum_number_of_fragments_leaves_the_rest_for_later(tmp_path, db, table):
    insert(db, table, 1, 25)
    with runner(tmp_path, db, {"Table Name": table, "Maximum-value Columns": "id", "Max Rows Per FlowFile": "5",
                               "Maximum Number of Fragments": "3"}) as run:
        run.run()
        outs = run.output("success")
        assert [o.attributes["fragment.index"] for o in outs] == ["0", "1", "2"]
        assert {o.attributes["fragment.count"] for o in outs} == {"3"}
        assert fetched_ids(run, outs) == list(range(1, 16))
        run.run()
        run.run()
        assert fetched_ids(run, run.output("success")) == list(range(1, 26))


def test_a_custom_query_is_aliased_by_the_table_name(tmp_path, db, table):
    insert(db, table, 1, 4)
    with runner(tmp_path, db, {"Table Name": "recent", "Custom Query": f"SELECT id, label FROM {table} WHERE id > 2",
                               "Maximum-value Columns": "id"}) as run:
        run.run()
        (out,) = run.output("success")
        assert fetched_ids(run, [out]) == [3, 4]
        reader = fastavro.reader(io.BytesIO(run.content(out)))
        assert reader.writer_schema["name"] == "any.data.recent"
        assert run.state(Scope.CLUSTER).values == {"recent@!@id": "4"}


def test_an_unusable_maximum_value_column_is_reported(tmp_path, db, table):
    with runner(tmp_path, db, {"Table Name": table, "Maximum-value Columns": "nope"}) as run:
        run.run()
        assert any("'nope' is not a column" in b for b in run.bulletins), run.bulletins


def test_the_database_going_away_mid_run_loses_and_repeats_nothing(tmp_path, db, table):
    insert(db, table, 1, 3)
    relay = TcpRelay(db.host, db.port)
    try:
        service = db.pool_properties("127.0.0.1", relay.port, **{"Max Wait Time": "2 sec"})
        with runner(tmp_path, db, {"Table Name": table, "Maximum-value Columns": "id"}, service=service) as run:
            run.run()
            relay.cut()
            insert(db, table, 4, 6)
            run.run()
            assert len(run.output("success")) == 1
            assert run.state(Scope.CLUSTER).values == {f"{table}@!@id": "3"}
            assert any("maximum values are unchanged" in b and f"127.0.0.1:{relay.port}" in b
                       for b in run.bulletins), run.bulletins
            relay.restore()
            run.run()
            assert fetched_ids(run, run.output("success")) == [1, 2, 3, 4, 5, 6]
    finally:
        relay.close()


def test_a_tenant_without_the_grant_is_refused(tmp_path, db, table):
    with pytest.raises(Exception, match="tenant acme's network allowlist does not open"):
        runner(tmp_path, db, {"Table Name": table}, tenant={}, confinement=ConfinementSettings())


def test_output_batch_size_releases_flowfiles_as_it_goes_without_maxvalue_attributes(tmp_path, db, table):
    insert(db, table, 1, 12)
    with runner(tmp_path, db, {"Table Name": table, "Maximum-value Columns": "id", "Max Rows Per FlowFile": "5",
                               "Output Batch Size": "2"}) as run:
        run.run()
        outs = run.output("success")
        assert fetched_ids(run, outs) == list(range(1, 13))
        assert all("maxvalue.id" not in o.attributes and "fragment.count" not in o.attributes for o in outs)
        assert run.state(Scope.CLUSTER).values == {f"{table}@!@id": "12"}
