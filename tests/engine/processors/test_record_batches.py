"""The micro-batch helpers of the record processors."""

import pyarrow as pa

from engine.processors._records import split_by_flowfile
from engine.processors.partition_record import _attribute, _partitions


def test_an_answer_is_split_by_flowfile_in_record_order_without_flowsite_columns():
    answer = pa.table({"v": [10, 30, 11, 31, 12], "__flowfile_index": pa.array([0, 3, 0, 3, 0], pa.int32()),
                       "__flowfile_rank": [1, 1, 2, 2, 3]})
    pieces = split_by_flowfile(answer, [0, 2, 3])
    assert [piece.to_pydict() for piece in pieces] == [{"v": [10, 11, 12]}, {"v": []}, {"v": [30, 31]}]
    kept = split_by_flowfile(answer, [3], keep=["__flowfile_rank"])
    assert kept[0].to_pydict() == {"v": [30, 31], "__flowfile_rank": [1, 2]}


def test_partitions_come_in_order_of_first_appearance_with_nulls_and_nested_values():
    records = pa.table({"k": ["b", None, "a", "b", None], "m": [[1], [2], [1], [1], [2]]})
    partitions = _partitions(records, ["k", "m"])
    assert [(rows.to_pylist(), first) for rows, first in partitions] == [([0, 3], 0), ([1, 4], 1), ([2], 2)]
    assert _partitions(records.slice(0, 0), ["k"]) == []


def test_attribute_values_follow_nifi_text_and_skip_non_scalars():
    import datetime
    import decimal

    assert [_attribute(value) for value in (True, 3, 1.5, "x", decimal.Decimal("1.50"),
                                            datetime.datetime(2024, 5, 1, 10, 0, 3), datetime.date(2024, 5, 1))] == [
        "true", "3", "1.5", "x", "1.50", "2024-05-01 10:00:03", "2024-05-01"]
    assert [_attribute(value) for value in (None, [1], {"a": 1}, b"x")] == [None] * 4
