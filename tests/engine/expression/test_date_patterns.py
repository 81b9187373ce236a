"""Every pattern letter of Java's DateTimeFormatter (Locale.US) in format, toDate, toInstant, formatInstant and
isValidDate: the outputs the DateTimeFormatter javadoc documents, Locale.US week rules (Sunday first, week 1
holds January 1st), quoting, optional sections, padding and the letter counts Java refuses."""

import pytest

from engine.expression import ExpressionError, compile_expression, evaluate


def fmt(moment: str, pattern: str, zone: str = "UTC") -> str:
    """``moment`` (``yyyy-MM-dd HH:mm:ss.SSS`` in UTC) formatted with ``pattern`` in ``zone``."""
    return evaluate(f"${{m:toDate('yyyy-MM-dd HH:mm:ss.SSS', 'UTC'):format(\"{pattern}\", '{zone}')}}",
                    {"m": moment})


@pytest.mark.parametrize("moment, pattern, expected", [
    # G era: AD; Anno Domini; A
    ("2024-03-05 14:07:09.042", "G GG GGG GGGG GGGGG", "AD AD AD Anno Domini A"),
    # u/y: 2004; 04 — y and u agree in the common era, yy is the two-digit form
    ("2004-07-10 00:00:00.000", "u uu uuu uuuu uuuuu y yy yyyy", "2004 04 2004 2004 02004 2004 04 2004"),
    # Q/q quarter: 3; 03; Q3; 3rd quarter (narrow: 3)
    ("2024-08-04 00:00:00.000", "Q QQ QQQ QQQQ QQQQQ", "3 03 Q3 3rd quarter 3"),
    ("2024-08-04 00:00:00.000", "q qq qqq qqqq qqqqq", "3 03 Q3 3rd quarter 3"),
    ("2024-01-04 00:00:00.000", "QQQQ", "1st quarter"),
    ("2024-12-04 00:00:00.000", "QQQQ", "4th quarter"),
    # M/L month: 7; 07; Jul; July; J
    ("2004-07-10 00:00:00.000", "M MM MMM MMMM MMMMM", "7 07 Jul July J"),
    ("2004-07-10 00:00:00.000", "L LL LLL LLLL LLLLL", "7 07 Jul July J"),
    # E day-of-week: Tue; Tuesday; T
    ("2024-03-05 00:00:00.000", "E EE EEE EEEE EEEEE", "Tue Tue Tue Tuesday T"),
    # e/c localized day-of-week, Sunday first in Locale.US: 2024-03-05 is a Tuesday, day 3
    ("2024-03-05 00:00:00.000", "e ee eee eeee eeeee", "3 03 Tue Tuesday T"),
    ("2024-03-05 00:00:00.000", "c ccc cccc ccccc", "3 Tue Tuesday T"),
    ("2024-03-03 00:00:00.000", "e c", "1 1"),
    ("2024-03-09 00:00:00.000", "e", "7"),
    # w/W/Y: Locale.US weeks; week 1 is the week (Sunday to Saturday) that holds January 1st
    ("2024-03-05 00:00:00.000", "w ww W", "10 10 2"),
    ("2024-12-29 00:00:00.000", "YYYY-ww yyyy YY", "2025-01 2024 25"),
    ("2024-12-28 00:00:00.000", "YYYY-ww", "2024-52"),
    ("2021-01-01 00:00:00.000", "YYYY-w", "2021-1"),  # ISO would say 2020-W53
    ("2021-01-03 00:00:00.000", "YYYY-w", "2021-2"),
    ("2024-06-01 00:00:00.000", "W", "1"),
    ("2024-06-02 00:00:00.000", "W", "2"),
    ("2024-06-30 00:00:00.000", "W", "6"),
    # d, D, F (day-of-week-in-month since Java 19: the 15th is the 3rd Friday of its month)
    ("2024-03-15 00:00:00.000", "d dd D DDD F", "15 15 75 075 3"),
    ("2024-03-07 00:00:00.000", "F", "1"),
    # g modified Julian day
    ("2024-03-05 12:00:00.000", "g", "60374"),
    ("1858-11-17 00:00:00.000", "g", "0"),
    # a, h/K/k/H: PM; 12; 0; 24; 0
    ("2024-03-05 00:30:00.000", "a h K k H hh KK kk HH", "AM 12 0 24 0 12 00 24 00"),
    ("2024-03-05 12:30:00.000", "a h K k H", "PM 12 0 12 12"),
    ("2024-03-05 23:05:06.000", "h K k H m s mm ss", "11 11 23 23 5 6 05 06"),
    # B day period
    ("2024-03-05 10:00:00.000", "B", "in the morning"),
    ("2024-03-05 14:00:00.000", "BBBB", "in the afternoon"),
    ("2024-03-05 19:00:00.000", "BBBBB", "in the evening"),
    ("2024-03-05 23:00:00.000", "B", "at night"),
    ("2024-03-05 12:00:00.000", "B BBBB BBBBB", "noon noon n"),
    ("2024-03-05 00:00:30.000", "B BBBBB", "midnight mi"),
    ("2024-03-05 00:01:00.000", "B", "at night"),
    # S fraction (truncated, not rounded), A milli-of-day, n nano-of-second, N nano-of-day
    ("2024-03-05 00:00:01.978", "S SS SSS SSSS SSSSSSSSS", "9 97 978 9780 978000000"),
    ("2024-03-05 00:00:01.234", "A AAAAAA N n", "1234 001234 1234000000 234000000"),
    # quoted literals, '' and optional sections
    ("2024-03-05 15:00:00.000", "h 'o''clock' a", "3 o'clock PM"),
    ("2024-03-05 15:00:00.000", "''HH''", "'15'"),
    ("2024-03-05 15:00:00.000", "'It''s' yyyy", "It's 2024"),
    ("2024-03-05 15:00:00.000", "yyyy-MM-dd['T'HH:mm[:ss]]", "2024-03-05T15:00:00"),
    ("2024-03-05 15:00:00.000", "'[literal]' yyyy", "[literal] 2024"),
    # p pads the next field with spaces
    ("2024-03-05 15:00:00.000", "ppd|pppM|ppppMMM", " 5|  3| Mar"),
])
def test_pattern_letters_format_as_java(moment, pattern, expected):
    assert fmt(moment, pattern) == expected


@pytest.mark.parametrize("moment, pattern, zone, expected", [
    # V zone id: America/Los_Angeles; v generic: Pacific Time; PT; z: Pacific Standard Time; PST
    ("2024-01-15 20:00:00.000", "VV", "America/Los_Angeles", "America/Los_Angeles"),
    ("2024-01-15 20:00:00.000", "v vvvv", "America/Los_Angeles", "PT Pacific Time"),
    ("2024-07-15 20:00:00.000", "v vvvv", "America/Los_Angeles", "PT Pacific Time"),
    ("2024-01-15 20:00:00.000", "z zz zzz zzzz", "America/Los_Angeles",
     "PST PST PST Pacific Standard Time"),
    ("2024-07-15 20:00:00.000", "z zzzz", "America/Los_Angeles", "PDT Pacific Daylight Time"),
    ("2024-07-15 20:00:00.000", "z zzzz", "Europe/Paris", "CEST Central European Summer Time"),
    ("2024-01-15 20:00:00.000", "z zzzz vvvv", "Asia/Tokyo", "JST Japan Standard Time Japan Time"),
    ("2024-01-15 20:00:00.000", "z zzzz VV", "UTC", "UTC Coordinated Universal Time UTC"),
    ("2024-07-15 20:00:00.000", "z zzzz VV", "GMT", "GMT Greenwich Mean Time GMT"),
    ("2024-07-15 20:00:00.000", "z zzzz", "Europe/London", "BST British Summer Time"),
    ("2024-01-15 20:00:00.000", "z zzzz", "Europe/London", "GMT Greenwich Mean Time"),
    # O localized offset: GMT+8; GMT+08:00 (GMT for zero; minutes only when not zero in the short form)
    ("2024-01-15 20:00:00.000", "O OOOO", "Asia/Shanghai", "GMT+8 GMT+08:00"),
    ("2024-01-15 20:00:00.000", "O OOOO", "Asia/Kolkata", "GMT+5:30 GMT+05:30"),
    ("2024-01-15 20:00:00.000", "O OOOO", "America/Los_Angeles", "GMT-8 GMT-08:00"),
    ("2024-01-15 20:00:00.000", "O OOOO", "UTC", "GMT GMT"),
    # X: 'Z' for zero; -08; -0830; -08:30; -083015; -08:30:15
    ("2024-01-15 20:00:00.000", "X XX XXX XXXX XXXXX", "UTC", "Z Z Z Z Z"),
    ("2024-01-15 20:00:00.000", "X XX XXX XXXX XXXXX", "America/Los_Angeles", "-08 -0800 -08:00 -0800 -08:00"),
    ("2024-01-15 20:00:00.000", "X XX XXX", "Asia/Kolkata", "+0530 +0530 +05:30"),
    # x: +00; +0000; +00:00 for zero
    ("2024-01-15 20:00:00.000", "x xx xxx xxxx xxxxx", "UTC", "+00 +0000 +00:00 +0000 +00:00"),
    ("2024-01-15 20:00:00.000", "x xx xxx", "Asia/Kolkata", "+0530 +0530 +05:30"),
    # Z: +0000 (1-3); GMT+08:00 (4, GMT for zero); -08:00 (5, Z for zero)
    ("2024-01-15 20:00:00.000", "Z ZZ ZZZ ZZZZ ZZZZZ", "UTC", "+0000 +0000 +0000 GMT Z"),
    ("2024-01-15 20:00:00.000", "Z ZZZZ ZZZZZ", "America/Los_Angeles", "-0800 GMT-08:00 -08:00"),
    ("2024-01-15 20:00:00.000", "Z ZZZZ ZZZZZ", "Asia/Shanghai", "+0800 GMT+08:00 +08:00"),
    # The default format of a Date
    ("2024-07-15 20:00:00.000", "EEE MMM dd HH:mm:ss zzz yyyy", "America/New_York", "Mon Jul 15 16:00:00 EDT 2024"),
])
def test_zone_letters_format_as_java(moment, pattern, zone, expected):
    assert fmt(moment, pattern, zone) == expected


@pytest.mark.parametrize("text, pattern, expected", [
    ("AD 2024-03-05", "G yyyy-MM-dd", "2024-03-05T00:00:00Z"),
    ("Anno Domini 2024-03-05", "GGGG yyyy-MM-dd", "2024-03-05T00:00:00Z"),
    ("2025-01-1", "YYYY-ww-e", "2024-12-29T00:00:00Z"),  # Sunday of week 1 of week-based year 2025
    ("2021-1-Fri", "YYYY-w-EEE", "2021-01-01T00:00:00Z"),
    ("2024 Q1 Mar 05", "yyyy QQQ MMM dd", "2024-03-05T00:00:00Z"),
    ("2024 1st quarter 03-05", "yyyy QQQQ MM-dd", "2024-03-05T00:00:00Z"),
    ("05-mar-2024 tuesday", "dd-MMM-yyyy EEEE", "2024-03-05T00:00:00Z"),  # case-insensitive
    ("2024-075", "uuuu-DDD", "2024-03-15T00:00:00Z"),
    ("20240305", "yyyyMMdd", "2024-03-05T00:00:00Z"),
    ("20240305143000", "yyyyMMddHHmmss", "2024-03-05T14:30:00Z"),
    ("60374", "g", "2024-03-05T00:00:00Z"),
    ("2024-03-05 12:30 AM", "yyyy-MM-dd hh:mm a", "2024-03-05T00:30:00Z"),
    ("2024-03-05 00:30 PM", "yyyy-MM-dd KK:mm a", "2024-03-05T12:30:00Z"),
    ("2024-03-05 24:30", "yyyy-MM-dd kk:mm", "2024-03-05T00:30:00Z"),
    ("2024-03-05 3 o'clock PM", "yyyy-MM-dd h 'o''clock' a", "2024-03-05T15:00:00Z"),
    ("1970-01-01 3723004", "yyyy-MM-dd A", "1970-01-01T01:02:03.004Z"),
    ("1970-01-01 3723000000005", "yyyy-MM-dd N", "1970-01-01T01:02:03.000000005Z"),
    ("2024-03-05 10:00:00.123456789", "yyyy-MM-dd HH:mm:ss.SSSSSSSSS", "2024-03-05T10:00:00.123456789Z"),
    ("2024-03-05 3 in the afternoon", "yyyy-MM-dd h B", "2024-03-05T15:00:00Z"),
    ("2024-03-05 9:30 in the morning", "yyyy-MM-dd h:mm B", "2024-03-05T09:30:00Z"),
    ("2024-03-05 11 at night", "yyyy-MM-dd h B", "2024-03-05T23:00:00Z"),
    ("2024-03-05 in the morning", "yyyy-MM-dd B", "2024-03-05T09:00:00Z"),  # the middle of the period
    ("2024-03-05 noon", "yyyy-MM-dd B", "2024-03-05T12:00:00Z"),
    ("2024-03-05", "yyyy-MM-dd[ HH:mm]", "2024-03-05T00:00:00Z"),
    ("2024-03-05 10:15", "yyyy-MM-dd[ HH:mm]", "2024-03-05T10:15:00Z"),
    ("2024-03-05T10:15:30", "yyyy-MM-dd['T'HH:mm[:ss]]", "2024-03-05T10:15:30Z"),
    ("2024-03-05T10:15", "yyyy-MM-dd['T'HH:mm[:ss]]", "2024-03-05T10:15:00Z"),
    ("2024-03-05 10:00 Asia/Tokyo", "yyyy-MM-dd HH:mm VV", "2024-03-05T01:00:00Z"),
    ("2024-07-01 12:00 PDT", "yyyy-MM-dd HH:mm z", "2024-07-01T19:00:00Z"),
    ("2024-01-01 12:00 Pacific Standard Time", "yyyy-MM-dd HH:mm zzzz", "2024-01-01T20:00:00Z"),
    ("2024-01-01 12:00 Pacific Time", "yyyy-MM-dd HH:mm vvvv", "2024-01-01T20:00:00Z"),
    ("2024-01-01 12:00 GMT+8", "yyyy-MM-dd HH:mm O", "2024-01-01T04:00:00Z"),
    ("2024-01-01 12:00 GMT+05:30", "yyyy-MM-dd HH:mm OOOO", "2024-01-01T06:30:00Z"),
    ("2024-01-01 12:00 Z", "yyyy-MM-dd HH:mm X", "2024-01-01T12:00:00Z"),
    ("2024-01-01 12:00 +0530", "yyyy-MM-dd HH:mm XX", "2024-01-01T06:30:00Z"),
    ("2024-01-01 12:00 -08:00", "yyyy-MM-dd HH:mm xxx", "2024-01-01T20:00:00Z"),
    ("2024-01-01 12:00 +0100", "yyyy-MM-dd HH:mm Z", "2024-01-01T11:00:00Z"),
    ("2024-01-01 12:00 GMT+01:00", "yyyy-MM-dd HH:mm ZZZZ", "2024-01-01T11:00:00Z"),
    ("2024-01-01 12:00 Z", "yyyy-MM-dd HH:mm ZZZZZ", "2024-01-01T12:00:00Z"),
])
def test_pattern_letters_parse_as_java(text, pattern, expected):
    assert evaluate(f"${{t:toInstant(\"{pattern}\", 'UTC')}}", {"t": text}) == expected


def test_to_date_and_format_round_trip_every_letter():
    pattern = "G uuuu-MM-dd (QQQ, MMMM, EEEE, e, D) hh:mm:ss.SSS a VV"
    text = evaluate(f"${{m:format('{pattern}', 'Europe/Paris')}}", {"m": "1709647629042"})
    assert text == "AD 2024-03-05 (Q1, March, Tuesday, 3, 65) 03:07:09.042 PM Europe/Paris"
    back = evaluate(f"${{t:toDate('{pattern}', 'UTC'):toNumber()}}", {"t": text})
    assert back == "1709647629042"


def test_a_day_of_week_that_contradicts_the_date_is_an_error():
    with pytest.raises(ExpressionError) as caught:
        evaluate("${t:toDate('yyyy-MM-dd EEE')}", {"t": "2024-03-05 Wed"})
    assert "Wednesday conflicts with 2024-03-05, a Tuesday" in caught.value.message


@pytest.mark.parametrize("pattern, fragment", [
    ("MMMMMM", "too many pattern letters 'MMMMMM'"),
    ("aa", "too many pattern letters 'aa'"),
    ("hhh", "too many pattern letters 'hhh'"),
    ("ZZZZZZ", "too many pattern letters 'ZZZZZZ'"),
    ("zzzzz", "too many pattern letters 'zzzzz'"),
    ("cc", "invalid pattern letters 'cc'"),
    ("V", "invalid pattern letters 'V'"),
    ("OO", "invalid pattern letters 'OO'"),
    ("vv", "invalid pattern letters 'vv'"),
    ("yyyy-bb", "unsupported letter 'b'"),
    ("yyyy#", "reserved character '#'"),
    ("yyyy]", "']' without '['"),
    ("'open", "unterminated quote"),
])
def test_patterns_java_refuses_are_compile_errors(pattern, fragment):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(f"${{a:format(\"{pattern}\")}}")
    assert fragment in caught.value.message


@pytest.mark.parametrize("attrs, expected", [
    ({"d": "2024-08-04", "f": "yyyy-MM-dd"}, "true"),
    ({"d": "2024-08-04", "f": "yyyy-MM-bb"}, "false"),  # unknown letter
    ({"d": "2024-08-04", "f": "yyyy-MMMMMM-dd"}, "false"),  # too many letters
    ({"d": "2024-08-04", "f": "'yyyy"}, "false"),  # unterminated quote
])
def test_is_valid_date_with_a_pattern_from_an_expression_that_is_invalid_is_false(attrs, expected):
    assert evaluate("${d:isValidDate(${f})}", attrs) == expected


def test_is_valid_date_with_a_zone_from_an_expression_that_is_invalid_is_false():
    attrs = {"d": "2024-08-04", "z": "Mars/Base"}
    assert evaluate("${d:isValidDate('yyyy-MM-dd', ${z})}", attrs) == "false"
    assert evaluate("${d:isValidDate('yyyy-MM-dd', 'UTC')}", attrs) == "true"


def test_is_valid_date_accepts_every_letter():
    assert evaluate("${d:isValidDate('YYYY-ww-e QQQ')}", {"d": "2025-01-1 Q4"}) == "true"
    assert evaluate("${d:isValidDate('yyyy-MM-dd EEE')}", {"d": "2024-03-05 Wed"}) == "false"
    assert evaluate("${d:isValidDate('yyyy-MM-dd HH:mm zzzz')}", {"d": "2024-07-01 12:00 Pacific Daylight Time"}) \
        == "true"


def test_is_valid_instant_takes_no_pattern():
    assert evaluate("${d:isValidInstant()}", {"d": "2024-03-05 Wed"}) == "false"
    with pytest.raises(ExpressionError) as caught:
        compile_expression("${d:isValidInstant('yyyy')}")
    assert "takes no arguments" in caught.value.message
