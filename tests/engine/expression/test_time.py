"""Dates and instants: NiFi's guide examples for format, toDate, toInstant, formatInstant, the duration
arithmetic, isValidDate and isValidInstant, plus the pattern letters and conversions around them."""

import pytest

from engine.expression import ExpressionError, compile_expression, evaluate

ATTRS = {
    "time": "1420058163264",
    "instant_time": "1647884009479",
    "timeIsoOffset": "2022-12-03T10:15:30+01:00",
    "timeIsoInstant": "2022-12-03T10:15:30Z",
    "timeRFC1123": "Thu, 01 Dec 2022 16:00:00 GMT",
    "year": "2014",
    "time_text": "2014/12/31 15:36:03.264Z",
    "date": "12-24-2014",
    "dateTime": "12-24-2014 12:06:59",
    "nanos": "2022/03/18 10:22:27.678234567",
    "aug": "04-08-2026",
    "aug_time": "04-08-2026 00:00:00",
    "vienna": "2026-03-29 00:00:00",
    "new_york": "2026-11-02 00:00:00",
    "default_format": "Tue Mar 05 14:07:09 UTC 2024",
    "slashed": "2024/03/05 14:07:09",
    "slashed_millis": "2024/03/05 14:07:09.042",
}


@pytest.mark.parametrize("text, expected", [
    # format (guide)
    ("${time:format(\"yyyy/MM/dd HH:mm:ss.SSS'Z'\", \"GMT\")}", "2014/12/31 20:36:03.264Z"),
    ("${time:format(\"yyyy/MM/dd HH:mm:ss.SSS'Z'\", \"America/Los_Angeles\")}", "2014/12/31 12:36:03.264Z"),
    ("${time:format(\"yyyy/MM/dd HH:mm:ss.SSS'Z'\", \"Asia/Tokyo\")}", "2015/01/01 05:36:03.264Z"),
    ("${time:format(\"yyyy/MM/dd\", \"GMT\")}", "2014/12/31"),
    ("${time:format(\"HH:mm:ss.SSS'Z'\", \"GMT\")}", "20:36:03.264Z"),
    ("${time:format(\"yyyy\", \"GMT\")}", "2014"),
    # format on a String that is a date (NiFi's implicit conversions).
    ("${default_format:format('yyyy-MM-dd HH:mm')}", "2024-03-05 14:07"),
    ("${slashed:format('dd.MM.yyyy HH:mm:ss')}", "05.03.2024 14:07:09"),
    ("${slashed_millis:format('SSS')}", "042"),
    # D is the day of the year; S counts are fractions of the second.
    ("${time:format('D', 'GMT')}", "365"),
    ("${time:format('DDD', 'Asia/Tokyo')}", "001"),
    ("${literal('2024-02-01'):toDate('yyyy-MM-dd'):format('D')}", "32"),
    ("${literal('2024-060'):toDate('yyyy-DDD'):format('yyyy-MM-dd')}", "2024-02-29"),
    ("${time:format('s.S', 'GMT')}", "3.2"),
    ("${time:format('SSSSSS', 'GMT')}", "264000"),
    ("${time:format('k K', 'GMT')}", "20 8"),
    # toDate (guide)
    ("${year:toDate('yyyy', 'GMT'):toNumber()}", "1388534400000"),
    ("${time_text:toDate(\"yyyy/MM/dd HH:mm:ss.SSS'Z'\", \"GMT\"):toNumber()}", "1420040163264"),
    ("${date:toDate('MM-dd-yyyy'):format('yyyy/MM/dd')}", "2014/12/24"),
    # toInstant / formatInstant (guide)
    ("${time_text:toInstant(\"yyyy/MM/dd HH:mm:ss.SSS'Z'\", \"GMT\")}", "2014-12-31T15:36:03.264Z"),
    ("${dateTime:toInstant('MM-dd-yyyy HH:mm:ss', 'GMT'):formatInstant('yyyy/MM/dd', 'GMT')}", "2014/12/24"),
    ("${instant_time:formatInstant(\"yyyy/MM/dd HH:mm:ss.SSS'Z'\", \"GMT\")}", "2022/03/21 17:33:29.479Z"),
    ("${timeIsoOffset:formatInstant(\"yyyy/MM/dd HH:mm:ss.SSS'Z'\", \"Asia/Tokyo\")}", "2022/12/03 18:15:30.000Z"),
    ("${timeIsoInstant:formatInstant(\"yyyy/MM/dd\", \"Asia/Tokyo\")}", "2022/12/03"),
    ("${timeRFC1123:formatInstant(\"yyyy/MM/dd HH:mm:ss.SSS'Z'\", \"GMT\")}", "2022/12/01 16:00:00.000Z"),
    ("${timeIsoInstant:formatInstant('yyyy-MM-dd HH:mm')}", "2022-12-03 10:15"),
    # Nanosecond precision survives toInstant (guide: toMicros / toNanos).
    ("${nanos:toInstant('yyyy/MM/dd HH:mm:ss.SSSSSSSSS', 'America/New_York'):toMicros()}", "1647613347678234"),
    ("${nanos:toInstant('yyyy/MM/dd HH:mm:ss.SSSSSSSSS', 'America/New_York'):toNanos()}", "1647613347678234567"),
    ("${nanos:toInstant('yyyy/MM/dd HH:mm:ss.SSSSSSSSS', 'UTC')}", "2022-03-18T10:22:27.678234567Z"),
    ("${nanos:toInstant('yyyy/MM/dd HH:mm:ss.SSSSSSSSS', 'UTC'):formatInstant('SSSSSSSSS n', 'UTC')}",
     "678234567 678234567"),
    ("${timeIsoInstant:formatInstant('yyyy', 'UTC'):toNumber()}", "2022"),
    # plusDuration / minusDuration (guide)
    ("${aug:toDate('dd-MM-yyyy'):plusDuration('1 week'):format('dd-MM-yyyy')}", "11-08-2026"),
    ("${aug:toDate('dd-MM-yyyy'):plusDuration('2 years'):format('dd-MM-yyyy')}", "04-08-2028"),
    ("${aug:toDate('dd-MM-yyyy'):plusDuration('3 months'):format('dd-MM-yyyy')}", "04-11-2026"),
    ("${aug:toDate('dd-MM-yyyy'):plusDuration('2 hours'):format('dd-MM-yyyy HH:mm:ss')}", "04-08-2026 02:00:00"),
    ("${aug:toDate('dd-MM-yyyy'):plusDuration('25 HOURS'):format('dd-MM-yyyy HH:mm:ss')}", "05-08-2026 01:00:00"),
    ("${vienna:toDate('yyyy-MM-dd HH:mm:ss', 'Europe/Vienna'):plusDuration('1 day', 'Europe/Vienna')"
     ":format('yyyy-MM-dd HH:mm:ssXXX', 'Europe/Vienna')}", "2026-03-30 00:00:00+02:00"),
    ("${aug:toDate('dd-MM-yyyy'):minusDuration('1 month'):format('dd-MM-yyyy')}", "04-07-2026"),
    ("${aug:toDate('dd-MM-yyyy'):minusDuration('2 weeks'):format('dd-MM-yyyy')}", "21-07-2026"),
    ("${aug:toDate('dd-MM-yyyy'):minusDuration('1 year'):format('dd-MM-yyyy')}", "04-08-2025"),
    ("${aug:toDate('dd-MM-yyyy'):minusDuration('1 second'):format('dd-MM-yyyy HH:mm:ss')}", "03-08-2026 23:59:59"),
    ("${new_york:toDate('yyyy-MM-dd HH:mm:ss', 'America/New_York'):minusDuration('1 day', 'America/New_York')"
     ":format('yyyy-MM-dd HH:mm:ssXXX', 'America/New_York')}", "2026-11-01 00:00:00-04:00"),
    ("${literal('2024-01-31'):toDate('yyyy-MM-dd'):plusDuration('1 month'):format('yyyy-MM-dd')}", "2024-02-29"),
    ("${literal('2024-02-29'):toDate('yyyy-MM-dd'):plusDuration('1 year'):format('yyyy-MM-dd')}", "2025-02-28"),
    ("${literal('2024-03-31'):toDate('yyyy-MM-dd'):minusDuration('1 month'):format('yyyy-MM-dd')}", "2024-02-29"),
    ("${missing:toDate('yyyy'):plusDuration('1 day')}", ""),
    # plusInstantDuration / minusInstantDuration (guide)
    ("${aug_time:toInstant('dd-MM-yyyy HH:mm:ss', 'UTC'):plusInstantDuration('1 week')"
     ":formatInstant('dd-MM-yyyy HH:mm:ss', 'UTC')}", "11-08-2026 00:00:00"),
    ("${aug_time:toInstant('dd-MM-yyyy HH:mm:ss', 'UTC'):plusInstantDuration('2 years')"
     ":formatInstant('dd-MM-yyyy HH:mm:ss', 'UTC')}", "04-08-2028 00:00:00"),
    ("${aug_time:toInstant('dd-MM-yyyy HH:mm:ss', 'UTC'):plusInstantDuration('3 months')"
     ":formatInstant('dd-MM-yyyy HH:mm:ss', 'UTC')}", "04-11-2026 00:00:00"),
    ("${aug_time:toInstant('dd-MM-yyyy HH:mm:ss', 'Australia/Sydney'):plusInstantDuration('3 months')"
     ":formatInstant('dd-MM-yyyy HH:mm:ss', 'Australia/Sydney')}", "04-11-2026 01:00:00"),
    ("${aug_time:toInstant('dd-MM-yyyy HH:mm:ss', 'UTC'):minusInstantDuration('1 week')"
     ":formatInstant('dd-MM-yyyy HH:mm:ss', 'UTC')}", "28-07-2026 00:00:00"),
    ("${aug_time:toInstant('dd-MM-yyyy HH:mm:ss', 'UTC'):minusInstantDuration('2 years')"
     ":formatInstant('dd-MM-yyyy HH:mm:ss', 'UTC')}", "04-08-2024 00:00:00"),
    ("${aug_time:toInstant('dd-MM-yyyy HH:mm:ss', 'UTC'):minusInstantDuration('3 months')"
     ":formatInstant('dd-MM-yyyy HH:mm:ss', 'UTC')}", "04-05-2026 00:00:00"),
    ("${aug_time:toInstant('dd-MM-yyyy HH:mm:ss', 'Australia/Sydney'):minusInstantDuration('3 months')"
     ":formatInstant('dd-MM-yyyy HH:mm:ss', 'Australia/Sydney')}", "04-05-2026 00:00:00"),
    ("${nanos:toInstant('yyyy/MM/dd HH:mm:ss.SSSSSSSSS', 'UTC'):plusInstantDuration('433 nanoseconds')}",
     "2022-03-18T10:22:27.678235Z"),
    ("${timeIsoInstant:plusInstantDuration('1 day')}", "2022-12-04T10:15:30Z"),
    # isValidInstant / isValidDate (guide)
    ("${literal('2026-08-04T10:15:30Z'):isValidInstant()}", "true"),
    ("${literal('2026-08-04T10:15:30+05:30'):isValidInstant()}", "true"),
    ("${literal('Tue, 04 Aug 2026 10:15:30 GMT'):isValidInstant()}", "true"),
    ("${literal('not-a-date'):isValidInstant()}", "false"),
    ("${literal('2026-08-04T10:15:30Z'):isValidInstant():ifElse('valid-instant', 'invalid-instant')}",
     "valid-instant"),
    ("${missing:isValidInstant()}", "false"),
    ("${literal('2026-02-30T10:15:30Z'):isValidInstant()}", "false"),
    ("${literal('04-08-2026'):isValidDate('dd-MM-yyyy')}", "true"),
    ("${literal('31-02-2026'):isValidDate('dd-MM-yyyy')}", "false"),
    ("${literal('not-a-date'):isValidDate('dd-MM-yyyy')}", "false"),
    ("${literal('2026-08-04 10:15:30'):isValidDate('yyyy-MM-dd HH:mm:ss', 'UTC')}", "true"),
    ("${literal('04-08-2026'):isValidDate('dd-MM-yyyy'):ifElse('valid', 'invalid')}", "valid"),
    ("${literal('2026-03-29 02:30'):isValidDate('yyyy-MM-dd HH:mm', 'Europe/Vienna')}", "false"),
    ("${literal('2026-03-29 03:30'):isValidDate('yyyy-MM-dd HH:mm', 'Europe/Vienna')}", "true"),
    ("${missing:isValidDate('yyyy')}", "false"),
    ("${now():toInstant('yyyy', 'UTC'):toNumber():gt(1700000000000)}", "true"),
])
def test_time_functions(text, expected):
    assert evaluate(text, ATTRS) == expected


@pytest.mark.parametrize("text, position, fragment", [
    ("${a:plusDuration('1 fortnight')}", 17, "invalid amount '1 fortnight'"),
    ("${a:plusInstantDuration('1week')}", 24, "invalid amount '1week'"),
    ("${a:minusDuration('')}", 18, "the amount is empty"),
    ("${a:toInstant('yyyy')}", 4, "takes 2 arguments but got 1"),
    ("${a:formatInstant('yyyy', 'Nowhere/Town')}", 26, "unknown time zone"),
    ("${a:isValidDate('yyyy-bb')}", 16, "unsupported letter 'b'"),
])
def test_time_errors_found_when_compiled(text, position, fragment):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert caught.value.position == position
    assert fragment in caught.value.message


@pytest.mark.parametrize("text, attrs, fragment", [
    ("${a:plusDuration(${b})}", {"a": "0", "b": "3 fortnights"}, "invalid amount '3 fortnights'"),
    ("${a:formatInstant('yyyy')}", {"a": "yesterday"}, "cannot convert 'yesterday' to an instant"),
    ("${a:toInstant('yyyy-MM-dd', 'UTC')}", {"a": "2024/01/01"}, "does not match date pattern"),
    ("${a:format('yyyy')}", {"a": "soon"}, "cannot convert 'soon' to a date"),
])
def test_time_errors_found_when_evaluated(text, attrs, fragment):
    with pytest.raises(ExpressionError) as caught:
        evaluate(text, attrs)
    assert fragment in caught.value.message
