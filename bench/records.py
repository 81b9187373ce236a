"""Records per second through QueryRecord and ConvertRecord, beside plain PySpark on the same data.

Run with ``python -m bench.records [--flowfiles N] [--records R] [--large-mb M]``. Two cases:

* small: N FlowFiles (default 10,000) of R CSV records each (default 100);
* large: one CSV FlowFile of M MiB (default 1,024).

Each case runs QueryRecord (a filter and a projection: ``SELECT id, name, amount FROM FLOWFILE
WHERE amount > 500``, CSVReader → CSVRecordSetWriter) and ConvertRecord (CSVReader →
ParquetRecordSetWriter) in a real throw-away node (``engine.testing.ProcessorTestRunner``: the
repositories on disk, every session committed through the WAL, provenance recorded), from the
moment the FlowFiles are queued until the input queue is empty. Beside each, in the same run and
on the same Spark session (``local[*]``), the same work as a plain PySpark job over the same
data as files: ``spark.read.csv(...)`` of the N files (or the one file), the filter and
projection written back as CSV, or the whole written as Parquet. Records/s counts input
records; the ratio is Flowsite's rate over PySpark's.

Targets (issue 13): ≥ 1,000,000 records/s per node and ≥ 50 % of plain PySpark on the large
case; ≥ 200,000 records/s on the small-FlowFile case.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

from bench.machine import describe_machine
from engine.spark.runtime import configure_node_runtime, node_runtime
from engine.spark.settings import SparkSettings
from engine.testing import ProcessorTestRunner

HEADER = "id,name,amount,category,day\n"
QUERY = "SELECT id, name, amount FROM FLOWFILE WHERE amount > 500"
SPARK_SCHEMA = "id LONG, name STRING, amount DOUBLE, category STRING, day DATE"
CSV_READER = ("CSVReader", {})
CSV_WRITER = ("CSVRecordSetWriter", {})
PARQUET_WRITER = ("ParquetRecordSetWriter", {})


def csv_records(first: int, count: int, rnd: random.Random) -> str:
    """``count`` CSV lines (no header) with ids from ``first``."""
    categories = ("books", "garden", "toys", "music", "tools")
    return "".join(f"{n},name-{n % 997},{rnd.random() * 1000:.2f},{categories[n % 5]},2026-11-{1 + n % 28:02d}\n"
                   for n in range(first, first + count))


def large_csv(path: Path, megabytes: int) -> int:
    """Write a CSV file of about ``megabytes`` MiB; returns its record count."""
    rnd = random.Random(7)
    records = 0
    with open(path, "w") as out:
        out.write(HEADER)
        while out.tell() < megabytes * 1024 * 1024:
            out.write(csv_records(records, 100_000, rnd))
            records += 100_000
    return records


def run_processor(work: Path, processor: str, properties: dict, writer, contents: list[bytes]) -> float:
    """Seconds QueryRecord/ConvertRecord takes to empty its input queue of ``contents``."""
    services = {"reader": CSV_READER, "writer": writer}
    with ProcessorTestRunner(processor, work, {"Record Reader": "reader", "Record Writer": "writer", **properties},
                             services=services) as runner:
        for content in contents:
            runner.enqueue(content)
        node_runtime().run(lambda spark: spark.range(1).count())  # the session is started before the clock
        started = time.perf_counter()
        while runner.input_flowfiles():
            runner.run(stop=False)
        elapsed = time.perf_counter() - started
        assert not runner.output("failure"), "the benchmark's FlowFiles went to failure"
        return elapsed


def run_pyspark(source: str, out: Path, query: bool) -> float:
    """Seconds a plain PySpark job takes for the same work over the same data as files."""
    def job(spark):
        frame = spark.read.schema(SPARK_SCHEMA).option("header", True).csv(source)
        if query:
            frame.where("amount > 500").select("id", "name", "amount").write.mode("overwrite") \
                .option("header", True).csv(str(out))
        else:
            frame.write.mode("overwrite").parquet(str(out))
    started = time.perf_counter()
    node_runtime().run(job)
    return time.perf_counter() - started


def report(case: str, records: int, ours: float, theirs: float) -> None:
    print(f"  {case:<28} Flowsite {records / ours:>12,.0f} records/s ({ours:6.1f} s)   "
          f"PySpark {records / theirs:>12,.0f} records/s ({theirs:6.1f} s)   ratio {theirs / ours:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flowfiles", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=100)
    parser.add_argument("--large-mb", type=int, default=1024)
    parser.add_argument("--directory", type=Path, default=None, help="where the data and the nodes go")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-records-", dir=args.directory))
    try:
        configure_node_runtime(SparkSettings(master="local[*]", ui_enabled=False), base / "spark-node", "bench")
        print(describe_machine(base))
        rnd = random.Random(3)

        files = base / "small-files"
        files.mkdir()
        contents = []
        for number in range(args.flowfiles):
            content = (HEADER + csv_records(number * args.records, args.records, rnd)).encode()
            (files / f"{number:06d}.csv").write_bytes(content)
            contents.append(content)
        records = args.flowfiles * args.records
        print(f"small: {args.flowfiles:,} FlowFiles of {args.records} records")
        for name, processor, properties, writer, query in (
                ("QueryRecord (filter+project)", "QueryRecord", {"matched": QUERY}, CSV_WRITER, True),
                ("ConvertRecord (CSV→Parquet)", "ConvertRecord", {}, PARQUET_WRITER, False)):
            ours = run_processor(base / f"node-small-{processor}", processor, properties, writer, contents)
            theirs = run_pyspark(str(files), base / f"spark-small-{processor}", query)
            report(name, records, ours, theirs)
            shutil.rmtree(base / f"node-small-{processor}", ignore_errors=True)
        del contents

        if args.large_mb:
            big = base / "large.csv"
            records = large_csv(big, args.large_mb)
            print(f"large: one FlowFile of {big.stat().st_size / 2**20:,.0f} MiB, {records:,} records")
            for name, processor, properties, writer, query in (
                    ("QueryRecord (filter+project)", "QueryRecord", {"matched": QUERY}, CSV_WRITER, True),
                    ("ConvertRecord (CSV→Parquet)", "ConvertRecord", {}, PARQUET_WRITER, False)):
                ours = run_processor(base / f"node-large-{processor}", processor, properties, writer,
                                     [big.read_bytes()])
                theirs = run_pyspark(str(big), base / f"spark-large-{processor}", query)
                report(name, records, ours, theirs)
                shutil.rmtree(base / f"node-large-{processor}", ignore_errors=True)
    finally:
        node_runtime().stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
