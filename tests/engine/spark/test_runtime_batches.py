"""Records in and out of Spark a batch at a time (``frame_batches``, ``collect_batches``): staged
as Parquet as they come, read back in order, the files removed after."""

from __future__ import annotations

import pyarrow as pa


def test_batches_go_in_and_come_back_in_order_through_staged_files(spark_runtime):
    schema = pa.schema([("n", pa.int64()), ("word", pa.string())])
    taken = []

    def batches():
        for first in range(0, 30_000, 10_000):
            taken.append(first)
            yield pa.record_batch([pa.array(range(first, first + 10_000)),
                                   pa.array([f"w{n % 7}" for n in range(first, first + 10_000)])], schema=schema)

    def job(session):
        with spark_runtime.frame_batches(session, schema, batches()) as frame:
            staged = list(spark_runtime.staging_root.rglob("*.parquet"))
            with spark_runtime.collect_batches(frame.where("n % 3 = 0").orderBy("n")) as answer:
                read = [batch.num_rows for batch in answer]
                out = list(spark_runtime.staging_root.rglob("*.parquet"))
            with spark_runtime.collect_batches(frame.where("n % 3 = 0").orderBy("n")) as answer:
                table = answer.read_all()
        return staged, read, out, table

    staged, read, out, table = spark_runtime.run(job)
    assert taken == [0, 10_000, 20_000] and staged
    assert sum(read) == 10_000 and len(out) > len(staged)
    assert table.column("n").to_pylist() == list(range(0, 30_000, 3))
    assert table.schema == schema
    assert list(spark_runtime.staging_root.rglob("*.parquet")) == [], "the staged files are removed"
