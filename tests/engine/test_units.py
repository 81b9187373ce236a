import pytest

from engine.units import format_data_size, parse_data_size, parse_duration


@pytest.mark.parametrize("text, seconds", [
    ("30 sec", 30), ("30 secs", 30), ("2 mins", 120), ("10 millis", 0.01), ("1 hour", 3600),
    ("24 hours", 86400), ("3 days", 259200), ("1 week", 604800), ("0 sec", 0), ("250 ms", 0.25), ("5", 5), (1.5, 1.5),
])
def test_nifi_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text, size", [
    ("1 GB", 1 << 30), ("50 KB", 50 << 10), ("10 MB", 10 << 20), ("1 TB", 1 << 40), ("512 B", 512), ("100", 100),
    ("1.5 KB", 1536), (2048, 2048),
])
def test_nifi_data_sizes(text, size):
    assert parse_data_size(text) == size


@pytest.mark.parametrize("text", ["thirty seconds", "30 parsecs", "", "-5 sec"])
def test_bad_durations_name_the_text(text):
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["big", "5 XB", "1,5 GB"])
def test_bad_sizes_name_the_text(text):
    with pytest.raises(ValueError, match="size"):
        parse_data_size(text)


def test_format_data_size():
    assert [format_data_size(n) for n in (0, 1023, 1024, 1536, 5 << 20, 3 << 30)] == [
        "0 B", "1023 B", "1 KB", "1.5 KB", "5 MB", "3 GB"]
