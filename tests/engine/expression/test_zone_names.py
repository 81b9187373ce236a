"""Zone names (z, zzzz, v, vvvv) print and parse as Java 17 does with Locale.US, for zones on every continent.

The expected values were produced once with Java 17 (``DateTimeFormatter.ofPattern("z|zzzz|v|vvvv", Locale.US)``
on 2024-01-15T12:00Z and 2024-07-15T12:00Z; ``ZonedDateTime.parse("2024-01-11 12:00 <name>", …)`` for parsing).
"""

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from engine.expression import date_names
from engine.expression.dates import compile_pattern
from tests.engine.expression.test_date_patterns import fmt

JANUARY = datetime(2024, 1, 15, 12, tzinfo=timezone.utc)
JULY = datetime(2024, 7, 15, 12, tzinfo=timezone.utc)

# zone, January, July: "z|zzzz|v|vvvv" as Java prints them
JAVA_NAMES = [
    ("America/New_York", "EST|Eastern Standard Time|ET|Eastern Time", "EDT|Eastern Daylight Time|ET|Eastern Time"),
    ("America/Chicago", "CST|Central Standard Time|CT|Central Time", "CDT|Central Daylight Time|CT|Central Time"),
    ("America/Denver", "MST|Mountain Standard Time|MT|Mountain Time", "MDT|Mountain Daylight Time|MT|Mountain Time"),
    ("America/Phoenix", "MST|Mountain Standard Time|MT|Mountain Time", "MST|Mountain Standard Time|MT|Mountain Time"),
    ("America/Los_Angeles", "PST|Pacific Standard Time|PT|Pacific Time", "PDT|Pacific Daylight Time|PT|Pacific Time"),
    ("America/Anchorage", "AKST|Alaska Standard Time|AKT|Alaska Time", "AKDT|Alaska Daylight Time|AKT|Alaska Time"),
    ("Pacific/Honolulu", "HST|Hawaii-Aleutian Standard Time|HST|Hawaii-Aleutian Time",
     "HST|Hawaii-Aleutian Standard Time|HST|Hawaii-Aleutian Time"),
    ("America/Halifax", "AST|Atlantic Standard Time|AT|Atlantic Time", "ADT|Atlantic Daylight Time|AT|Atlantic Time"),
    ("America/St_Johns", "NST|Newfoundland Standard Time|NT|Newfoundland Time",
     "NDT|Newfoundland Daylight Time|NT|Newfoundland Time"),
    ("America/Mexico_City", "CST|Central Standard Time|CT|Central Time", "CST|Central Standard Time|CT|Central Time"),
    ("America/Sao_Paulo", "BRT|Brasilia Standard Time|BRT|Brasilia Time",
     "BRT|Brasilia Standard Time|BRT|Brasilia Time"),
    ("America/Argentina/Buenos_Aires", "ART|Argentina Standard Time|ART|Argentina Time",
     "ART|Argentina Standard Time|ART|Argentina Time"),
    ("America/Santiago", "CLST|Chile Summer Time|CLT|Chile Time", "CLT|Chile Standard Time|CLT|Chile Time"),
    ("America/Bogota", "COT|Colombia Standard Time|COT|Colombia Time", "COT|Colombia Standard Time|COT|Colombia Time"),
    ("Europe/London", "GMT|Greenwich Mean Time|BT|British Time", "BST|British Summer Time|BT|British Time"),
    ("Europe/Dublin", "GMT|Greenwich Mean Time|IT|Irish Time", "IST|Irish Standard Time|IT|Irish Time"),
    ("Europe/Lisbon", "WET|Western European Standard Time|WET|Western European Time",
     "WEST|Western European Summer Time|WET|Western European Time"),
    ("Europe/Paris", "CET|Central European Standard Time|CET|Central European Time",
     "CEST|Central European Summer Time|CET|Central European Time"),
    ("Europe/Athens", "EET|Eastern European Standard Time|EET|Eastern European Time",
     "EEST|Eastern European Summer Time|EET|Eastern European Time"),
    ("Europe/Moscow", "MSK|Moscow Standard Time|MT|Moscow Time", "MSK|Moscow Standard Time|MT|Moscow Time"),
    ("Europe/Istanbul", "TRT|Turkey Time|TRT|Turkey Time", "TRT|Turkey Time|TRT|Turkey Time"),
    ("Africa/Casablanca", "WEST|Western European Summer Time|WET|Western European Time",
     "WEST|Western European Summer Time|WET|Western European Time"),
    ("Africa/Lagos", "WAT|West Africa Standard Time|WAT|West Africa Time",
     "WAT|West Africa Standard Time|WAT|West Africa Time"),
    ("Africa/Johannesburg", "SAST|South Africa Standard Time|SAT|South Africa Time",
     "SAST|South Africa Standard Time|SAT|South Africa Time"),
    ("Africa/Nairobi", "EAT|East Africa Time|EAT|Eastern Africa Time", "EAT|East Africa Time|EAT|Eastern Africa Time"),
    ("Africa/Cairo", "EET|Eastern European Standard Time|EET|Eastern European Time",
     "EEST|Eastern European Summer Time|EET|Eastern European Time"),
    ("Asia/Dubai", "GST|Gulf Standard Time|GT|Gulf Time", "GST|Gulf Standard Time|GT|Gulf Time"),
    ("Asia/Tehran", "IRST|Iran Standard Time|IRT|Iran Time", "IRST|Iran Standard Time|IRT|Iran Time"),
    ("Asia/Kolkata", "IST|India Standard Time|IT|India Time", "IST|India Standard Time|IT|India Time"),
    ("Asia/Kathmandu", "NPT|Nepal Time|NPT|Nepal Time", "NPT|Nepal Time|NPT|Nepal Time"),
    ("Asia/Dhaka", "BDT|Bangladesh Standard Time|BDT|Bangladesh Time",
     "BDT|Bangladesh Standard Time|BDT|Bangladesh Time"),
    ("Asia/Bangkok", "ICT|Indochina Time|ICT|Indochina Time", "ICT|Indochina Time|ICT|Indochina Time"),
    ("Asia/Singapore", "SGT|Singapore Standard Time|SGT|Singapore Time",
     "SGT|Singapore Standard Time|SGT|Singapore Time"),
    ("Asia/Shanghai", "CST|China Standard Time|CT|China Time", "CST|China Standard Time|CT|China Time"),
    ("Asia/Hong_Kong", "HKT|Hong Kong Standard Time|HKT|Hong Kong Time",
     "HKT|Hong Kong Standard Time|HKT|Hong Kong Time"),
    ("Asia/Tokyo", "JST|Japan Standard Time|JT|Japan Time", "JST|Japan Standard Time|JT|Japan Time"),
    ("Asia/Seoul", "KST|Korean Standard Time|KT|Korean Time", "KST|Korean Standard Time|KT|Korean Time"),
    ("Asia/Jerusalem", "IST|Israel Standard Time|IT|Israel Time", "IDT|Israel Daylight Time|IT|Israel Time"),
    ("Australia/Perth", "AWST|Australian Western Standard Time|AWT|Western Australia Time",
     "AWST|Australian Western Standard Time|AWT|Western Australia Time"),
    ("Australia/Adelaide", "ACDT|Australian Central Daylight Time|ACT|Central Australia Time",
     "ACST|Australian Central Standard Time|ACT|Central Australia Time"),
    ("Australia/Sydney", "AEDT|Australian Eastern Daylight Time|AET|Eastern Australia Time",
     "AEST|Australian Eastern Standard Time|AET|Eastern Australia Time"),
    ("Australia/Lord_Howe", "LHDT|Lord Howe Daylight Time|LHT|Lord Howe Time",
     "LHST|Lord Howe Standard Time|LHT|Lord Howe Time"),
    ("Pacific/Auckland", "NZDT|New Zealand Daylight Time|NZT|New Zealand Time",
     "NZST|New Zealand Standard Time|NZT|New Zealand Time"),
    ("Pacific/Chatham", "CHADT|Chatham Daylight Time|CHAT|Chatham Time",
     "CHAST|Chatham Standard Time|CHAT|Chatham Time"),
    ("Atlantic/Reykjavik", "GMT|Greenwich Mean Time|GMT|Greenwich Mean Time",
     "GMT|Greenwich Mean Time|GMT|Greenwich Mean Time"),
    ("Etc/GMT+5", "GMT-05:00|GMT-05:00|GMT-05:00|GMT-05:00", "GMT-05:00|GMT-05:00|GMT-05:00|GMT-05:00"),
    ("UTC", "UTC|Coordinated Universal Time|UTC|Coordinated Universal Time",
     "UTC|Coordinated Universal Time|UTC|Coordinated Universal Time"),
    ("GMT", "GMT|Greenwich Mean Time|GMT|Greenwich Mean Time", "GMT|Greenwich Mean Time|GMT|Greenwich Mean Time"),
]


@pytest.mark.parametrize("zone, january, july", JAVA_NAMES)
def test_zone_names_print_as_java_in_winter_and_summer(zone, january, july):
    pattern = compile_pattern("z|zzzz|v|vvvv")
    assert pattern.format(JANUARY.astimezone(ZoneInfo(zone))) == january
    assert pattern.format(JULY.astimezone(ZoneInfo(zone))) == july


def test_zone_names_in_an_expression_are_java_s():
    assert fmt("2024-01-15 12:00:00.000", "z zzzz v vvvv", "Asia/Singapore") \
        == "SGT Singapore Standard Time SGT Singapore Time"
    assert fmt("2024-07-15 12:00:00.000", "v", "Europe/Moscow") == "MT"


def test_dublin_winter_is_standard_and_summer_daylight_as_in_java():
    dublin = ZoneInfo("Europe/Dublin")
    assert compile_pattern("z").format(datetime(1995, 1, 15, 12, tzinfo=dublin)) == "GMT"
    assert compile_pattern("zzzz").format(datetime(1995, 7, 15, 12, tzinfo=dublin)) == "Irish Standard Time"


def test_a_zone_that_once_kept_daylight_time_prints_its_daylight_name_then():
    assert compile_pattern("z zzzz").format(datetime(2010, 7, 15, 12, tzinfo=ZoneInfo("Europe/Moscow"))) \
        == "MSD Moscow Summer Time"


def test_every_zone_java_knows_has_six_names():
    table = date_names._zone_names().by_zone
    assert len(table) > 600
    assert all(len(names) == 6 and all(names) for names in table.values())


# name, the zone Java's parser reads it as, the instant of 2024-01-11 12:00 in that zone
JAVA_PARSED = [
    ("CST", "America/Chicago", "2024-01-11T18:00:00Z"),
    ("CDT", "America/Chicago", "2024-01-11T18:00:00Z"),
    ("IST", "Africa/Abidjan", "2024-01-11T12:00:00Z"),
    ("BST", "Pacific/Bougainville", "2024-01-11T01:00:00Z"),
    ("MT", "Europe/Moscow", "2024-01-11T09:00:00Z"),
    ("PT", "America/Los_Angeles", "2024-01-11T20:00:00Z"),
    ("EST", "America/New_York", "2024-01-11T17:00:00Z"),
    ("SGT", "Asia/Singapore", "2024-01-11T04:00:00Z"),
    ("MSK", "Europe/Moscow", "2024-01-11T09:00:00Z"),
    ("EET", "Europe/Bucharest", "2024-01-11T10:00:00Z"),
    ("CET", "Europe/Paris", "2024-01-11T11:00:00Z"),
    ("AEST", "Australia/Sydney", "2024-01-11T01:00:00Z"),
    ("NZDT", "Pacific/Auckland", "2024-01-10T23:00:00Z"),
    ("JST", "Asia/Tokyo", "2024-01-11T03:00:00Z"),
    ("HKT", "Asia/Hong_Kong", "2024-01-11T04:00:00Z"),
    ("GMT", "GMT", "2024-01-11T12:00:00Z"),
    ("UTC", "UTC", "2024-01-11T12:00:00Z"),
    ("WAT", "Africa/Lagos", "2024-01-11T11:00:00Z"),
    ("Singapore Standard Time", "Asia/Singapore", "2024-01-11T04:00:00Z"),
    ("Moscow Standard Time", "Europe/Moscow", "2024-01-11T09:00:00Z"),
    ("Greenwich Mean Time", "Africa/Abidjan", "2024-01-11T12:00:00Z"),
    ("Coordinated Universal Time", "Etc/UTC", "2024-01-11T12:00:00Z"),
    ("Central European Summer Time", "Europe/Paris", "2024-01-11T11:00:00Z"),
    ("India Standard Time", "Asia/Kolkata", "2024-01-11T06:30:00Z"),
    ("Irish Standard Time", "Africa/Abidjan", "2024-01-11T12:00:00Z"),
    ("British Summer Time", "Africa/Abidjan", "2024-01-11T12:00:00Z"),
    ("Mountain Time", "America/Denver", "2024-01-11T19:00:00Z"),
    ("Singapore Time", "Asia/Singapore", "2024-01-11T04:00:00Z"),
    ("Australian Eastern Standard Time", "Australia/Sydney", "2024-01-11T01:00:00Z"),
]


@pytest.mark.parametrize("name, zone, instant", JAVA_PARSED)
def test_zone_names_parse_to_the_zone_java_prefers(name, zone, instant):
    letters = "zzzz" if " " in name else "z"
    parsed = compile_pattern(f"yyyy-MM-dd HH:mm {letters}").parse(f"2024-01-11 12:00 {name}")
    assert date_names.zone_id(parsed.tzinfo) == zone
    assert parsed.astimezone(timezone.utc).isoformat().replace("+00:00", "Z") == instant


def test_a_generic_name_parses_with_v():
    parsed = compile_pattern("yyyy-MM-dd HH:mm vvvv").parse("2024-01-11 12:00 Singapore Time")
    assert date_names.zone_id(parsed.tzinfo) == "Asia/Singapore"
