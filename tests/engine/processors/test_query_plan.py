"""QueryRecord's rewrite of a FLOWFILE query for micro-batches (its answers against Spark are in
test_query_record.py)."""

import pytest

from engine.processors._query_plan import QuerySyntaxError, plan_query


@pytest.mark.parametrize("query, rewritten", [
    ('SELECT "name" FROM FLOWFILE WHERE "age" >= 18',
     "SELECT `name`, __flowfile_index FROM v AS FLOWFILE WHERE `age` >= 18"),
    ("SELECT * FROM FLOWFILE f WHERE f.a = 'x\"y'", "SELECT * FROM v AS f WHERE f.a = 'x\"y'"),
    ("SELECT city, COUNT(*) AS n FROM FLOWFILE GROUP BY city",
     "SELECT city, COUNT(*) AS n, __flowfile_index FROM v AS FLOWFILE GROUP BY city, __flowfile_index"),
    ("SELECT MAX(a) FROM FLOWFILE", "SELECT MAX(a), __flowfile_index FROM v AS FLOWFILE GROUP BY __flowfile_index"),
    ("SELECT a, SUM(b) OVER (PARTITION BY c ORDER BY d) AS s FROM FLOWFILE",
     "SELECT a, SUM(b) OVER (PARTITION BY __flowfile_index, c ORDER BY d) AS s, __flowfile_index FROM v AS FLOWFILE"),
    ("SELECT DISTINCT a FROM FLOWFILE ORDER BY a",
     "SELECT DISTINCT a, __flowfile_index FROM v AS FLOWFILE ORDER BY __flowfile_index NULLS LAST, a"),
])
def test_batched_rewrites(query, rewritten):
    plan = plan_query(query)
    assert plan.batched_sql("v") == rewritten
    assert plan.single_reason is None


def test_a_limit_becomes_a_row_number_per_flowfile():
    plan = plan_query("SELECT name, age FROM FLOWFILE ORDER BY age DESC LIMIT 2 OFFSET 1")
    assert plan.batched_sql("v") == (
        "SELECT * FROM (SELECT name, age, __flowfile_index, ROW_NUMBER() OVER (PARTITION BY __flowfile_index "
        "ORDER BY age DESC) AS __flowfile_rank FROM v AS FLOWFILE) AS __flowfile_numbered "
        "WHERE __flowfile_rank > 1 AND __flowfile_rank <= 3 ORDER BY __flowfile_index, __flowfile_rank")
    unordered = plan_query("SELECT name FROM FLOWFILE LIMIT 5").batched_sql("v")
    assert "MONOTONICALLY_INCREASING_ID() AS __flowfile_row" in unordered
    assert "ORDER BY FLOWFILE.__flowfile_row" in unordered


def test_an_aggregate_without_group_by_asks_for_the_answer_over_no_records():
    assert plan_query("SELECT COUNT(*) FROM FLOWFILE").needs_empty_answer
    assert not plan_query("SELECT a, COUNT(*) FROM FLOWFILE GROUP BY a").needs_empty_answer
    assert not plan_query("SELECT a FROM FLOWFILE").needs_empty_answer


@pytest.mark.parametrize("query, reason", [
    ("SELECT a FROM FLOWFILE UNION SELECT b FROM FLOWFILE", "a set operation (UNION)"),
    ("WITH t AS (SELECT * FROM FLOWFILE) SELECT * FROM t", "a WITH clause"),
    ("SELECT * FROM FLOWFILE x JOIN FLOWFILE y ON x.a = y.a", "a FROM clause other than FLOWFILE alone"),
    ("SELECT a FROM FLOWFILE WHERE a IN (SELECT b FROM FLOWFILE)", "a subquery"),
    ("SELECT 1", "no FROM clause"),
    ("SELECT a, COUNT(*) FROM FLOWFILE GROUP BY ROLLUP (a)", "GROUPING SETS, ROLLUP or CUBE"),
    ("SELECT DISTINCT a FROM FLOWFILE LIMIT 3", "DISTINCT with LIMIT"),
    ("SELECT * FROM FLOWFILE ORDER BY 1 LIMIT 3", "an ORDER BY ordinal that names * or no column"),
])
def test_queries_that_run_once_per_flowfile(query, reason):
    plan = plan_query(query)
    assert plan.batched is None and plan.single_reason == reason
    assert "FROM v" in plan.single_sql("v") or "FROM" not in query


def test_the_flowfile_table_keeps_its_name_for_qualified_columns():
    assert plan_query("SELECT FLOWFILE.a FROM FLOWFILE").single_sql("v") == "SELECT FLOWFILE.a FROM v AS FLOWFILE"


@pytest.mark.parametrize("query, problem", [
    ("SELECT * FROM other", "the only table is FLOWFILE, not other"),
    ("SELECT * FROM db.FLOWFILE", "the only table is FLOWFILE"),
    ("SELECT * FROM parquet.`/etc/passwd`", "the only table is FLOWFILE"),
    ("SELECT * FROM range(10)", "table functions are not allowed"),
    ("SELECT java_method('java.lang.System', 'exit', 0) FROM FLOWFILE", "java_method is not allowed"),
    ("SELECT 1 FROM FLOWFILE; SELECT 2 FROM FLOWFILE", "one SELECT statement is expected, not 2"),
    ("INSERT INTO FLOWFILE VALUES (1)", "only SELECT queries are allowed"),
    ("SELECT __flowfile_index FROM FLOWFILE", "a name Flowsite reserves"),
    ("SELECT (", "not valid SQL"),
])
def test_unusable_queries(query, problem):
    with pytest.raises(QuerySyntaxError, match=problem.replace("(", r"\(")):
        plan_query(query)
