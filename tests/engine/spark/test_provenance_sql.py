"""The SQL of provenance analytics: ad-hoc SQL must be one read-only query of the view
``provenance`` (and what runs is the query as sqlglot writes it back); the ready questions fill
in checked integer parameters only."""

from __future__ import annotations

import pytest
import sqlglot

from engine.spark.provenance_sql import QUESTIONS, UnsafeQueryError, check_read_only


@pytest.mark.parametrize("sql", [
    "SELECT * FROM provenance",
    "  select count(*) from provenance;  ",
    "WITH drops AS (SELECT * FROM provenance WHERE event_type = 'DROP') SELECT component_id, count(*) FROM drops "
    "GROUP BY component_id",
    "SELECT component_id FROM provenance UNION ALL SELECT component_id FROM provenance",
    "SELECT p, count(*) FROM provenance LATERAL VIEW explode(parent_uuids) t AS p GROUP BY p",
    "SELECT attributes['filename'] FROM provenance WHERE event_time > current_timestamp() - INTERVAL 1 HOUR",
    "SELECT * FROM (SELECT component_id FROM provenance) AS inner_query",
])
def test_read_only_queries_pass_and_run_as_sqlglot_writes_them(sql):
    written = check_read_only(sql)
    assert written == sqlglot.parse_one(sql, read="spark").sql(dialect="spark")
    assert check_read_only(written) == written


@pytest.mark.parametrize("sql, why", [
    ("", "empty"),
    ("SELECT 1; SELECT 2", "exactly one query"),
    ("SELECT * FROM provenance; DROP TABLE provenance", "exactly one query"),
    ("INSERT INTO t SELECT * FROM provenance", "INSERT is refused"),
    ("INSERT OVERWRITE DIRECTORY '/tmp/x' SELECT * FROM provenance", "refused"),
    ("CREATE TABLE t AS SELECT * FROM provenance", "CREATE is refused"),
    ("DROP VIEW provenance", "DROP is refused"),
    ("SET spark.sql.runSQLOnFiles=true", "SET is refused"),
    ("CACHE TABLE provenance", "CACHE is refused"),
    ("EXPLAIN SELECT * FROM provenance", "EXPLAIN is refused"),
    ("ADD JAR /tmp/evil.jar", "refused"),
    ("SELECT * FROM other_table", "not 'other_table'"),
    ("SELECT * FROM default.provenance", "not default.provenance"),
    ("SELECT * FROM global_temp.provenance", "not global_temp.provenance"),
    ("SELECT * FROM parquet.`/etc/passwd`", "only the view"),
    ("SELECT * FROM csv.`/etc/passwd`", "only the view"),
    ("SELECT * FROM range(10)", "table functions"),
    ("SELECT * FROM read_files('/etc')", "table functions"),
    ("SELECT reflect('java.lang.System', 'exit', 0)", "reflect() may not be used"),
    ("SELECT java_method('java.lang.Runtime', 'getRuntime')", "java_method() may not be used"),
    ("SELECT TRANSFORM(component_id) USING 'cat /etc/passwd' AS (line) FROM provenance", "script transforms"),
    ("SELECT xpath_string(details, '/a') FROM provenance", "xpath_string() may not be used"),
    ("SELECT from_xml(details, 'a STRING') FROM provenance", "from_xml() may not be used"),
    ("FROM provenance SELECT TRANSFORM(component_id) USING 'id'", "script transforms"),
    ("WITH a AS (SELECT * FROM secrets) SELECT * FROM a", "not 'secrets'"),
    ("SELECT FROM WHERE (", "does not parse"),
    ("SELECT * FROM provenance " + "x" * 20_000, "longer than"),
])
def test_anything_else_is_refused(sql, why):
    with pytest.raises(UnsafeQueryError) as refused:
        check_read_only(sql)
    assert why in str(refused.value)


def test_the_ready_questions_are_read_only_queries():
    assert set(QUESTIONS) == {"throughput", "slowest", "drops"}
    for question in QUESTIONS.values():
        check_read_only(question.sql())
        assert question.as_dict()["parameters"]


def test_question_parameters_are_checked_integers():
    slowest = QUESTIONS["slowest"]
    assert slowest.values(None) == {"hours": 24, "limit": 20}
    assert "INTERVAL 48 HOURS" in slowest.sql({"hours": 48}) and "LIMIT 5" in slowest.sql({"limit": "5"})
    for bad in ({"hours": 0}, {"hours": 10**9}, {"hours": "1; DROP TABLE x"}, {"hours": True}, {"hours": 1.5},
                {"colour": 1}):
        with pytest.raises(ValueError):
            slowest.sql(bad)
