import re
import socket
import time
from pathlib import Path

import pytest

from engine.expression import FUNCTIONS, evaluate

ATTRS = {
    "filename": "report.final.csv",
    "path": "/data/in/",
    "n": "7",
    "d": "2.5",
    "neg": "-7",
    "t": "true",
    "f": "false",
    "word": "Hello",
    "spaced": "  padded  ",
    "blank": "   ",
    "empty": "",
    "my attr": "quoted value",
    "json": 'say "hi"\n/',
    "url": "a b&c=d/é~*",
    "stamp": "2024-03-05 14:07:09.042",
    "epoch": "1709647629042",
}

CASES = [
    # Strings.
    ("${word:toUpper()}", "HELLO"),
    ("${word:toLower()}", "hello"),
    ("${spaced:trim()}", "padded"),
    ("${word:length()}", "5"),
    ("${missing:length()}", "0"),
    ("${word:substring(1)}", "ello"),
    ("${word:substring(1, 3)}", "el"),
    ("${filename:substringBefore('.')}", "report"),
    ("${filename:substringBeforeLast('.')}", "report.final"),
    ("${filename:substringAfter('.')}", "final.csv"),
    ("${filename:substringAfterLast('.')}", "csv"),
    ("${word:substringBefore('z')}", "Hello"),
    ("${word:substringAfterLast('z')}", "Hello"),
    ("${word:indexOf('l')}", "2"),
    ("${word:lastIndexOf('l')}", "3"),
    ("${word:indexOf('z')}", "-1"),
    ("${word:append('!')}", "Hello!"),
    ("${word:prepend('>')}", ">Hello"),
    ("${missing:append('x')}", "x"),
    ("${missing:prepend('x')}", "x"),
    ("${filename:replace('.', '_')}", "report_final_csv"),
    ("${filename:replaceFirst('\\.', '_')}", "report_final.csv"),
    ("${filename:replaceAll('\\.', '_')}", "report_final_csv"),
    ("${filename:replaceAll('(\\w+)\\.(\\w+)\\.(\\w+)', '$3:$1')}", "csv:report"),
    # A quoted argument is itself a template, so a named group is written $${name}.
    ("${filename:replaceFirst('(?<base>\\w+)', '$${base}!')}", "report!.final.csv"),
    ("${word:replaceAll('l', '\\$')}", "He$$o"),
    ("${missing:replaceNull('default')}", "default"),
    ("${word:replaceNull('default')}", "Hello"),
    ("${empty:replaceNull('default')}", ""),
    ("${empty:replaceEmpty('default')}", "default"),
    ("${blank:replaceEmpty('default')}", "default"),
    ("${missing:replaceEmpty('default')}", "default"),
    ("${word:replaceEmpty('default')}", "Hello"),
    ("${n:padLeft(4)}", "___7"),
    ("${n:padLeft(4, '0')}", "0007"),
    ("${n:padRight(3, '-')}", "7--"),
    ("${word:padLeft(2)}", "Hello"),
    ("${n:toNumber():toString()}", "7"),
    ("${t:toString()}", "true"),
    # Encodings.
    ("${url:urlEncode()}", "a+b%26c%3Dd%2F%C3%A9%7E*"),
    ("${literal('a+b%26c'):urlDecode()}", "a b&c"),
    ("${json:escapeJson()}", 'say \\"hi\\"\\n\\/'),
    ("${literal('a\\\\nb\\\\u0041'):unescapeJson()}", "a\nbA"),
    ("${literal('<a href=\"x\">&</a>'):escapeXml()}", "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"),
    ("${literal('a,\"b\"'):escapeCsv()}", '"a,""b"""'),
    ("${literal('plain'):escapeCsv()}", "plain"),
    ("${word:base64Encode()}", "SGVsbG8="),
    ("${literal('SGVsbG8='):base64Decode()}", "Hello"),
    ("${word:hash('SHA-256')}", "185f8db32271fe25f561a6fc938b2e264306ec304eda518007d1764826381969"),
    ("${word:hash('MD5')}", "8b1a9953c4611296a827abf8c47804d7"),
    # Booleans.
    ("${missing:isNull()}", "true"),
    ("${empty:isNull()}", "false"),
    ("${missing:notNull()}", "false"),
    ("${word:notNull()}", "true"),
    ("${blank:isEmpty()}", "true"),
    ("${missing:isEmpty()}", "true"),
    ("${word:isEmpty()}", "false"),
    ("${word:equals('Hello')}", "true"),
    ("${word:equals('hello')}", "false"),
    ("${missing:equals('')}", "false"),
    ("${word:equalsIgnoreCase('hELLO')}", "true"),
    ("${word:contains('ell')}", "true"),
    ("${missing:contains('ell')}", "false"),
    ("${word:startsWith('He')}", "true"),
    ("${word:endsWith('lo')}", "true"),
    ("${word:endsWith('He')}", "false"),
    ("${filename:matches('.*\\.csv')}", "true"),
    ("${filename:matches('csv')}", "false"),
    ("${filename:find('csv')}", "true"),
    ("${filename:find('^csv')}", "false"),
    ("${missing:matches('.*')}", "false"),
    ("${word:in('Hi', 'Hello')}", "true"),
    ("${word:in('Hi')}", "false"),
    ("${t:not()}", "false"),
    ("${f:not()}", "true"),
    ("${t:and(${f})}", "false"),
    ("${t:and(true)}", "true"),
    ("${f:or(${t})}", "true"),
    ("${f:or(false)}", "false"),
    ("${n:gt(6)}", "true"),
    ("${n:gt(7)}", "false"),
    ("${n:ge(7)}", "true"),
    ("${n:lt(7)}", "false"),
    ("${n:le(7)}", "true"),
    ("${d:lt(${n})}", "true"),
    ("${missing:gt(1)}", "false"),
    ("${t:ifElse('yes', 'no')}", "yes"),
    ("${f:ifElse('yes', 'no')}", "no"),
    ("${word:isEmpty():ifElse('empty', ${word})}", "Hello"),
    # Numbers.
    ("${n:toNumber()}", "7"),
    ("${d:toNumber()}", "2"),
    ("${literal('0xF'):toNumber()}", "15"),
    ("${n:toDecimal()}", "7.0"),
    ("${n:toDecimal():plus(0.25)}", "7.25"),
    ("${n:plus(3)}", "10"),
    ("${n:plus(-10)}", "-3"),
    ("${n:minus(10)}", "-3"),
    ("${n:multiply(6)}", "42"),
    ("${n:multiply(0.5)}", "3.5"),
    ("${n:divide(2)}", "3"),
    ("${neg:divide(2)}", "-3"),
    ("${n:divide(2.0)}", "3.5"),
    ("${d:multiply(2)}", "5.0"),
    ("${n:mod(3)}", "1"),
    ("${neg:mod(3)}", "-1"),
    ("${d:mod(1)}", "0.5"),
    ("${missing:plus(1)}", ""),
    # Dates.
    ("${stamp:toDate('yyyy-MM-dd HH:mm:ss.SSS'):toNumber()}", "1709647629042"),
    ("${stamp:toDate('yyyy-MM-dd HH:mm:ss.SSS'):format('dd/MM/yy h:mm a')}", "05/03/24 2:07 PM"),
    ("${stamp:toDate('yyyy-MM-dd HH:mm:ss.SSS')}", "Tue Mar 05 14:07:09 UTC 2024"),
    ("${stamp:toDate('yyyy-MM-dd HH:mm:ss.SSS', 'Europe/Paris'):toNumber()}", "1709644029042"),
    ("${epoch:format(\"yyyy-MM-dd'T'HH:mm:ss.SSSZ\")}", "2024-03-05T14:07:09.042+0000"),
    ("${epoch:format('yyyy-MM-dd HH:mm z', 'America/New_York')}", "2024-03-05 09:07 EST"),
    ("${epoch:format(\"EEEE, d MMMM yyyy 'at' HH'h' ''X''\")}", "Tuesday, 5 March 2024 at 14h 'Z'"),
    ("${epoch:toDate():format('yyyy')}", "2024"),
    ("${literal('Tue Mar 05 14:07:09 UTC 2024'):toDate():toNumber()}", "1709647629000"),
    ("${literal('05/Mar/2024:14:07:09 +0100'):toDate('dd/MMM/yyyy:HH:mm:ss Z'):toNumber()}", "1709644029000"),
    ("${missing:format('yyyy')}", ""),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_function_results(text, expected):
    assert evaluate(text, ATTRS) == expected


def test_every_function_has_a_case():
    # Cases live in every test module of this package, so scan their text for '${…name(' calls.
    texts = [path.read_text() for path in Path(__file__).parent.glob("test_*.py")]
    used = {name for text in texts for name in re.findall(r"[:{]\s*([A-Za-z0-9]+)\(", text)}
    subjectless = {"now", "UUID", "nextInt", "random", "hostname", "ip", "anyAttribute", "allAttributes",
                   "anyMatchingAttribute", "allMatchingAttributes"}
    assert set(FUNCTIONS) - used - subjectless == set()


def test_now_is_current_time():
    before = int(time.time() * 1000)
    value = int(evaluate("${now():toNumber()}", {}))
    assert before - 5 <= value <= int(time.time() * 1000) + 5
    assert re.fullmatch(r"\w{3} \w{3} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}", evaluate("${now()}", {}))
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", evaluate("${now():format('yyyy-MM-dd')}", {}))


def test_uuid_is_random_v4():
    first, second = evaluate("${UUID()}", {}), evaluate("${UUID()}", {})
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", first)
    assert first != second


def test_next_int_counts_up():
    first, second = evaluate("${nextInt()}|${nextInt()}", {}).split("|")
    assert int(second) == int(first) + 1


def test_random_is_a_non_negative_long():
    value = int(evaluate("${random()}", {}))
    assert 0 <= value < 2**63
    assert 0 <= int(evaluate("${random():mod(10)}", {})) < 10


def test_hostname_and_ip():
    assert evaluate("${hostname()}", {}) == socket.gethostname()
    assert evaluate("${hostname(true)}", {}) == socket.getfqdn()
    assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", evaluate("${ip()}", {}))


def test_literal_starts_a_chain():
    assert evaluate("${literal(2):gt(1)}", {}) == "true"
    assert evaluate("${literal('abc'):toUpper()}", {}) == "ABC"
    assert evaluate("${literal(true)}", {}) == "true"


@pytest.mark.parametrize("text, expected", [
    ("${anyAttribute('word', 'missing'):isNull()}", "true"),
    ("${allAttributes('word', 'missing'):isNull()}", "false"),
    ("${allAttributes('word', 'filename'):notNull()}", "true"),
    ("${anyAttribute('word', 'filename'):contains('.csv')}", "true"),
    ("${anyMatchingAttribute('n|d'):gt(5)}", "true"),
    ("${allMatchingAttributes('n|d'):gt(5)}", "false"),
    # With no attribute to visit NiFi evaluates the chain once, on null.
    ("${allMatchingAttributes('nothing.*'):isNull()}", "true"),
    ("${anyAttribute('t'):not():not()}", "true"),
    ("${anyAttribute('word', 'n'):isEmpty():not()}", "true"),
])
def test_multi_attribute_subjects(text, expected):
    assert evaluate(text, ATTRS) == expected
