"""RecordPath's Spark SQL back end on a real local Spark: the same paths, the same records, the same answers
as the Python back end (and, for the RecordPath guide's examples, as NiFi's documentation)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from engine.record.path import RecordPathError, compile_record_path
from tests.engine.record.people import SCHEMA, rows, table
from tests.engine.record.test_record_path import GUIDE

GUIDE_SCHEMA = pa.schema([
    ("name", pa.string()),
    ("workAddress", SCHEMA.field("workAddress").type), ("homeAddress", SCHEMA.field("homeAddress").type),
    ("details", SCHEMA.field("details").type),
])

SELECT_PATHS = [
    # fields, descendants, wildcards, parents
    "/name", "/age", "/workAddress", "/workAddress/city", "/missing", "/details/vehicle", "/name/first",
    "//zip", "//city", "//sku", "//id", "/workAddress/*", "/details/*", "/workAddress/..", "/workAddress/city/..",
    "/*[./state != 'NY']/zip", "/*[./state = /details/preferredState]/city", "/*/city[../state = 'NJ']",
    "fieldName(//city/..)", "//city[not(startsWith(fieldName(..), 'work'))]", "fieldName(/workAddress/*)",
    "/workAddress//*", "/workAddress[*]", "/workAddress['city', 'zip']", "//city/..",
    "/homeAddress/zip[. != /workAddress/zip]",
    "/contacts[*]/*", "/contacts[*]/*[. != 'email']", "fieldName(/contacts[*]/*)", "//kind", "//value",
    "/contacts[*][./kind = 'phone']/value", "/contacts[*]/value/..",
    # arrays
    "/tags[0]", "/tags[-1]", "/tags[5]", "/tags[-5]", "/tags[0, 2]", "/tags[0, 0]", "/tags[0..1]", "/tags[1..-1]",
    "/tags[-2..-1]", "/tags[2..1]", "/tags[0, 2..3]", "/tags[*]", "/numbers[*]", "/tags[*][. != 'b']",
    "/numbers[*][. > 3]", "/numbers[*][. > '3']", "/numbers[*][. <= 5]", "fieldName(/tags[*])",
    # maps
    "/attrs['color']", "/attrs['missing']", "/attrs['color', 'size']", "/attrs[*]", "/attrs/color",
    "/attrs[*][. = 'red']", "count(/attrs[*])",
    # records in arrays
    "/orders[*]/id", "/orders[0]/items[*]/sku", "/orders[*]/items[*]/sku", "/orders[*][./total > 50]/id",
    "/orders[*]/items[*][./qty >= 2]/sku", "/orders[*]/items[*]/sku[../qty = 1]", "/orders[*]/total[. > 20]",
    "/orders[*][count(./items[*]) = 2]/id", "count(/orders[*]/items[*])", "count(//city)", "count(/tags[*])",
    # filters
    "/name[contains(., 'o')]", "/name[contains(., 'x')]", "/name[containsRegex(., 'o[gh]n')]",
    "/name[matchesRegex(., 'John')]", "/name[matchesRegex(., '.* Doe')]", "/name[startsWith(., '')]",
    "/name[endsWith(., 'e')]", "/name[not(endsWith(., 'e'))]", "/name[isEmpty(/details/employer)]",
    "/name[isEmpty(/details/vehicle)]", "/name[isBlank(/details/phrase)]", "/name[isEmpty(.)]",
    "/name[isEmpty(/tags[7])]", "/tags[*][isEmpty(.)]", "/tags[*][not(isEmpty(.))]",
    "/name[count(/tags[*]) = 4]", "/name[substringAfter(., ' ') = 'Doe']", "/name[. = /missing]",
    "/name[not(. = /missing)]", "/name[. != 'John Doe']", "/name[not(. != 'John Doe')]",
    "/name[matchesRegex(., /details/position)]",
    # comparisons as NiFi makes them (numbers, numbers as text, timestamps as epoch milliseconds)
    "/name = 'John Doe'", "contains(/name, 'o')", "not(contains(/name, 'o'))", "/age > 10", "/age = '42'",
    "/age != 42", "/active = 'true'", "/born > 0", "/age[. = 42]", "/age[. < 10]", "/score[. > 2]",
    "/workAddress/* = '123'",
    # functions
    "substring(/name, 0, -1)", "substring(/name, 0, -5)", "substring(/name, 1000, 1005)", "substring(/name, 0, 1005)",
    "substring(/name, -50, -1)", "substring(/name, 2, /age)", "substringAfter(/name, ' ')",
    "substringAfter(/name, 'o')",
    "substringAfter(/name, '')", "substringAfter(/name, 'xyz')", "substringAfterLast(/name, 'o')",
    "substringBefore(/name, 'o')", "substringBeforeLast(/name, 'o')", "substringBeforeLast(/name, 'xyz')",
    "substringBefore(/tags[*], 'x')", "replace(/name, 'o', 'xyz')", "replace(/name, 'Doe', /workAddress/city)",
    "replace(/name, '', '-')", "replaceRegex(/name, '\\s+.*', /workAddress/city)",
    "replaceRegex(/name, '([JD])', '$1x')",
    "replaceRegex(/name, '(?<hello>[JD])', '${hello}x')", "replaceNull(/details/vehicle, 'no vehicle')",
    "replaceNull(/details/vehicle, /name)", "concat(/name, ' lives in ', /homeAddress/city)",
    "concat(/tags[*], '|', /numbers[*], /age)", "concat()", "concat(/name, fieldName(/name))",
    "join(', ', /workAddress/*)", "join('-', /tags, /numbers)", "join('-', /tags[*])",
    "coalesce(/details/vehicle, /name)", "coalesce(/workAddress/city, /homeAddress/city)",
    "toUpperCase(/name)", "toLowerCase(/tags[*])", "toUpperCase(/missing)", "toUpperCase(substringBefore(/name, ' '))",
    "trim(/details/phrase)", "padLeft(/name, 15, '@')", "padRight(/name, 12)", "padLeft(/name, 3, '@')",
    "padLeft(/age, 5, '0')", "padLeft(/tags[*], 3, 'xy')", "toString(/payload, 'UTF-8')", "toString(/age, 'UTF-8')",
    "toString(/score, 'UTF-8')", "toString(/born, 'UTF-8')", "toString(/day, 'UTF-8')", "toString(/active, 'UTF-8')",
    "toString(/tags, 'UTF-8')", "toBytes(/name, 'UTF-8')", "toBytes(/name, 'UTF-16')", "escapeJson(/name)",
    "escapeJson(/age)", "escapeJson(/workAddress)", "escapeJson(/tags)", "escapeJson(/orders)", "escapeJson(/attrs)",
    "base64Encode(/name)", "base64Encode(/payload)", "base64Decode(base64Encode(/name))", "hash(/name, 'MD5')",
    "hash(/name, 'SHA-256')", "hash(/age, 'SHA-1')", "format(/born, 'yyyy-MM-dd', 'UTC')",
    "format(/born, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", 'UTC')", "format(/born, 'yyyy-MM-dd HH:mm:ss Z', 'GMT+8:00')",
    "format(/born, 'yyyy-MM-dd HH:mm:ssXXX', '-05:30')", "format(/born, 'yyyy-MM-dd HH:mm', 'America/New_York')",
    "format(/millis, 'yyyy-MM-dd', 'UTC')", "format(/day, 'yyyy/MM/dd', 'UTC')", "format(/name, 'yyyy')",
    "toDate(/born, 'yyyy')",
]


@pytest.fixture
def people(spark):
    return spark.createDataFrame(table())


@pytest.fixture
def guide(spark):
    return spark.createDataFrame(pa.Table.from_pylist([GUIDE], schema=GUIDE_SCHEMA))


def spark_values(frame, sql):
    return frame.selectExpr(f"{sql} AS r").toArrow().column("r").to_pylist()


class Batch:
    """Runs many expressions over one frame, twenty to a Spark job (far faster than a job each, and
    than one very wide job), once per test module; the tests then read their column. The expressions
    of a job that fails are run alone by their tests, so that each shows its own error."""

    done: dict[str, Batch] = {}

    def __init__(self, frame, expressions, size=20):
        self.results = {}
        items = list(expressions.items())
        for start in range(0, len(items), size):
            chunk = dict(items[start:start + size])
            names = {text: f"c{i}" for i, text in enumerate(chunk)}
            try:
                result = frame.selectExpr(*[f"{sql} AS {names[text]}" for text, sql in chunk.items()]).toArrow()
            except Exception:
                continue
            self.results.update({text: result.column(names[text]).to_pylist() for text in chunk})

    @classmethod
    def once(cls, key, frame, expressions):
        if key not in cls.done:
            cls.done[key] = cls(frame, expressions)
        return cls.done[key]

    def values(self, frame, text, sql):
        return self.results[text] if text in self.results else spark_values(frame, sql)


def sql_or_none(text, schema):
    try:
        return compile_record_path(text).to_sql(schema)
    except RecordPathError:
        return None


def expected_for(sql_value, python_values):
    if sql_value.is_array:
        return python_values
    assert all(len(v) <= 1 for v in python_values), "a path Spark gives one value for selected several in Python"
    return [v[0] if v else None for v in python_values]


@pytest.fixture
def selected(people):
    expressions = {text: sql_or_none(text, SCHEMA) for text in SELECT_PATHS}
    return Batch.once("people", people, {text: sql for text, sql in expressions.items() if sql is not None})


@pytest.mark.parametrize("text", SELECT_PATHS)
def test_spark_selects_what_python_selects(people, selected, text):
    path = compile_record_path(text)
    sql = path.sql_value(SCHEMA)
    python = [path.values(row) for row in rows()]
    assert selected.values(people, text, sql.sql) == expected_for(sql, python)


def guide_examples():
    from tests.engine.record.test_record_path import test_nifi_guide_examples as guide_test

    cases = next(mark.args[1] for mark in guide_test.pytestmark if mark.name == "parametrize")
    return [case for case in cases if "base64Decode('" not in case[0]]


@pytest.fixture
def guide_selected(guide):
    expressions = {text: sql_or_none(text, GUIDE_SCHEMA) for text, _ in guide_examples()}
    return Batch.once("guide", guide, {text: sql for text, sql in expressions.items() if sql is not None})


@pytest.mark.parametrize("text, expected", guide_examples())
def test_nifi_guide_examples_on_spark(guide, guide_selected, text, expected):
    sql = compile_record_path(text).sql_value(GUIDE_SCHEMA)
    got = guide_selected.values(guide, text, sql.sql)
    assert got == ([expected] if sql.is_array else [expected[0] if expected else None])


@pytest.mark.parametrize("text, sql", [
    ("/name", "`name`"),
    ("/workAddress/city", "`workAddress`.`city`"),
    ("/tags[0]", "CASE WHEN size(`tags`) > 0 THEN try_element_at(`tags`, 1) END"),
    ("/tags[-1]", "CASE WHEN size(`tags`) >= 1 THEN try_element_at(`tags`, -1) END"),
    ("/attrs['color']", "CASE WHEN `attrs` IS NOT NULL THEN try_element_at(`attrs`, 'color') END"),
    ("/tags[*]", "coalesce(`tags`, array())"),
    ("/orders[*]/id", "coalesce(transform(`orders`, __rp1 -> __rp1.`id`), array())"),
    ("toUpperCase(/name)", "upper(coalesce(`name`, ''))"),
])
def test_sql_text(text, sql):
    assert compile_record_path(text).to_sql(SCHEMA) == sql


def test_quoted_names_and_strings(spark):
    schema = pa.schema([("we`ird", pa.string()), ("n", pa.string())])
    frame = spark.createDataFrame(pa.Table.from_pylist([{"we`ird": "it's ${x} \\ ok", "n": "$1"}], schema=schema))
    path = compile_record_path("concat(/'we`ird', '|', 'it\\'s ${HOME}')")
    assert path.to_sql(schema).startswith("concat(coalesce(coalesce(`we``ird`, 'null')")
    assert spark_values(frame, path.to_sql(schema)) == ["it's ${x} \\ ok|it's ${HOME}"]


def test_paths_without_a_schema(people):
    assert compile_record_path("/workAddress/city").sql_value().type is None
    for text in ["/workAddress/city", "/tags[0]", "/tags[*]", "/attrs['color']", "/name[contains(., 'o')]",
                 "/orders[*]/items[*]/sku", "concat(/name, '!')", "substringBefore(/name, ' ')"]:
        path = compile_record_path(text)
        sql = path.sql_value()
        assert spark_values(people, sql.sql) == expected_for(sql, [path.values(row) for row in rows()]), text


@pytest.mark.parametrize("text, schema, message", [
    ("/*", SCHEMA, "the path selects values of different types"),
    ("//*", SCHEMA, "the path selects values of different types"),
    ("/*", None, "/* needs the record schema"),
    ("//city", None, "// needs the record schema"),
    ("unescapeJson(/name)", SCHEMA, "unescapeJson() gives a value whose type is known only once the JSON is read"),
    ("format(/born, 'HH:mm Z', 'America/New_York')", SCHEMA, "supported for fixed offsets"),
    ("format(/born, 'HH:mm z', 'GMT+1')", SCHEMA, "format() with the zone letters 'z'"),
    ("format(/born, /name)", SCHEMA, "format() needs its pattern and time zone as literals"),
    ("hash(/name, /age)", SCHEMA, "hash() needs the algorithm as a literal"),
    ("toBytes(/age, 'UTF-8')", SCHEMA, "toBytes() takes text but age is int64"),
    ("coalesce(/age, /name)", SCHEMA, "coalesce() of values of different types"),
    ("replaceNull(/age, 'none')", SCHEMA, "replaceNull() would mix int64 and string"),
])
def test_parts_spark_cannot_run_are_named(text, schema, message):
    with pytest.raises(RecordPathError) as caught:
        compile_record_path(text).to_sql(schema)
    assert str(caught.value).startswith("cannot run on Spark: ")
    assert message in str(caught.value)


def test_unparsable_dates_are_null_on_spark_but_kept_by_nifi(people):
    path = compile_record_path("toDate(/eventDate, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", 'GMT+8:00')")
    assert spark_values(people, path.to_sql(SCHEMA)) == [
        dt.datetime(2017, 10, 19, 16, tzinfo=dt.timezone.utc),
        dt.datetime(2000, 1, 1, 19, 4, 5, tzinfo=dt.timezone.utc), None]
    assert [path.values(row) for row in rows()][2] == ["not a date"]


# --- setting values ------------------------------------------------------------------------------------

RP = compile_record_path

# (destination, value): a RecordPath value is used by both back ends; otherwise (Spark SQL, Python value)
UPDATES = [
    ("/name", ("'X'", "X")),
    ("/workAddress/city", ("'Paris'", "Paris")),
    ("/workAddress/country", ("'FR'", "FR")),
    ("/newField", ("'new'", "new")),
    ("/tags[0]", ("'first'", "first")),
    ("/tags[-1]", ("'last'", "last")),
    ("/tags[0, 2]", ("'z'", "z")),
    ("/tags[1..-1]", ("'z'", "z")),
    ("/tags[*]", RP("toUpperCase(.)")),
    ("/numbers[*][. > 2]", ("CAST(0 AS BIGINT)", 0)),
    ("/attrs['color']", ("'green'", "green")),
    ("/attrs['shape']", ("'round'", "round")),
    ("/attrs['color', 'shape']", ("'c'", "c")),
    ("/attrs[*]", RP("concat(., '!')")),
    ("/orders[*]/id", RP("concat(., '-', ../total)")),
    ("/orders[*]/items[*][./qty > 1]/sku", ("'BULK'", "BULK")),
    ("/orders[0]/items[-1]/qty", ("CAST(-1 AS BIGINT)", -1)),
    ("/*[./state = 'NY']/zip", ("'00000'", "00000")),
    ("//city", RP("toUpperCase(.)")),
    ("//sku", ("'S'", "S")),
    ("/workAddress/*", ("'w'", "w")),
    ("/contacts[*]/*", RP("concat(fieldName(.), ':', .)")),
    ("/name", RP("/homeAddress/city")),
    ("/details/position", RP("substringBefore(../position, ' ')")),
    ("/workAddress/city/../zip", ("'z'", "z")),
    ("/homeAddress[./state = 'NJ']/city", ("'Hoboken'", "Hoboken")),
]


@pytest.mark.parametrize("destination, value", UPDATES)
def test_spark_sets_what_python_sets(people, destination, value):
    from pyspark.sql import functions

    sql_value, python_value = (value, value) if not isinstance(value, tuple) else value
    path = compile_record_path(destination)
    columns = path.update_sql_columns(sql_value, SCHEMA)
    expected = rows()
    for record in expected:
        path.update(record, python_value)
    updated = people.withColumns({name: functions.expr(sql) for name, sql in columns}).toArrow().to_pylist()
    assert updated == expected
    assert updated != rows(), "the update changed nothing"


def test_update_sql_gives_the_column_and_its_new_expression(people):
    column, sql = compile_record_path("/workAddress/city").update_sql("'Paris'", SCHEMA)
    assert column == "workAddress"
    assert sql == ("CASE WHEN `workAddress` IS NULL THEN NULL ELSE named_struct('number', `workAddress`.`number`, "
                   "'street', `workAddress`.`street`, 'city', IF(true, 'Paris', NULL), 'state', `workAddress`.`state`, "
                   "'zip', `workAddress`.`zip`) END")
    column, sql = compile_record_path("/name").update_sql(lambda current: f"upper({current})", SCHEMA)
    assert (column, sql) == ("name", "upper(`name`)")
    assert spark_values(people, sql) == ["JOHN DOE", "JANE ROE", None]


@pytest.mark.parametrize("destination, value, message", [
    ("./name", "'x'", "a destination must be an absolute path"),
    ("toUpperCase(/name)", "'x'", "a destination must be a path to fields, not a function"),
    ("/", "'x'", "replacing the whole record is not supported"),
    ("/workAddress/*/..", "'x'", "'..' in a destination is supported only right after a field"),
    ("/name", compile_record_path("/tags[*]"), "the replacement path '/tags[*]' selects several values"),
    ("//city", "'x'", "the path sets 2 columns (workAddress, homeAddress); use update_sql_columns"),
])
def test_updates_spark_cannot_run_are_named(destination, value, message):
    with pytest.raises(RecordPathError) as caught:
        compile_record_path(destination).update_sql(value, SCHEMA)
    assert message in str(caught.value)


def test_update_sql_needs_the_schema():
    with pytest.raises(RecordPathError, match="update_sql needs the record schema"):
        compile_record_path("/name").update_sql("'x'", None)
