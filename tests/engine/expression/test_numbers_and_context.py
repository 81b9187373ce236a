"""math (java.lang.Math by name), toRadix/fromRadix, and the functions that read the evaluation's surroundings
(getUri, thread, getStateValue, evaluateELString): NiFi's guide examples and TestQuery cases."""

import math
import threading

import pytest

from engine.expression import ExpressionError, evaluate

NUMBERS = {"fileSize": "1024", "radix": "1234A", "negative": "-64", "negativeDecimal": "-64.1", "two": "2",
           "twoDecimal": "2.3", "oneDecimal": "1.5", "first": "2.5", "second": "2", "filename": "file-255",
           "test1": "ABCDEF", "test2": "123"}


@pytest.mark.parametrize("text, expected", [
    ("${fileSize:toRadix(10)}", "1024"),
    ("${fileSize:toRadix(10, 1)}", "1024"),
    ("${fileSize:toRadix(10, 8)}", "00001024"),
    ("${fileSize:toRadix(16)}", "400"),
    ("${fileSize:toRadix(16, 8)}", "00000400"),
    ("${fileSize:toRadix(2)}", "10000000000"),
    ("${fileSize:toRadix(2, 16)}", "0000010000000000"),
    ("${filename:substringAfter('-'):toNumber():toRadix(16):toUpper()}", "FF"),
    ("${filename:substringAfter('-'):toNumber():toRadix(16, 4):toUpper()}", "00FF"),
    ("${filename:substringAfter('-'):toNumber():toRadix(36, 3):toUpper()}", "073"),
    ("${negative:toRadix(16)}", "-40"),
    ("${literal(1024.9):toRadix(16)}", "400"),
    ("${radix:fromRadix(11)}", "17720"),
    ("${radix:fromRadix(16)}", "74570"),
    ("${radix:fromRadix(20)}", "177290"),
    ("${test1:fromRadix(16)}", str(0xABCDEF)),
    ("${test2:fromRadix(4)}", "27"),
    ("${literal('-ff'):fromRadix(16)}", "-255"),
    ("${missing:fromRadix(16)}", ""),
    ("${math('random'):gt(-1)}", "true"),
    ("${literal(2):toDecimal():math('pow', 2.5)}", repr(math.pow(2, 2.5))),
    ("${literal(64):toDecimal():math('cbrt'):toNumber():math('max', 5)}", "5"),
    ("${literal(5.4):math('scalb', 2)}", "21.6"),
    ("${first:toDecimal():math('pow', ${second:toDecimal()})}", "6.25"),
    ("${negative:math('abs')}", "64"),
    ("${negativeDecimal:math('abs')}", "64.1"),
    ("${negative:math('max', ${two})}", "2"),
    ("${negativeDecimal:math('max', ${twoDecimal})}", "2.3"),
    ("${oneDecimal:math('pow', ${two:toDecimal()})}", "2.25"),
    ("${oneDecimal:math('scalb', ${two})}", "6.0"),
    ("${negative:math('abs'):toDecimal():math('cbrt'):math('max', ${two:toDecimal():math('pow',${oneDecimal})"
     ":mod(${two})})}", "4.0"),
    ("${literal(2.5):math('round')}", "3"),
    ("${literal(-2.5):math('round')}", "-2"),
    ("${literal(-1.0):math('sqrt')}", "NaN"),
    ("${literal(7):math('floorMod', -3)}", "-2"),
    ("${missing:math('abs')}", ""),
])
def test_numbers(text, expected):
    assert evaluate(text, NUMBERS) == expected


@pytest.mark.parametrize("text, fragment", [
    ("${math('rand')}", "java.lang.Math has no method 'rand' taking (no arguments)"),
    ("${negativeDecimal:math('absolute')}", "no method 'absolute' taking (double)"),
    ("${oneDecimal:math('power', ${two:toDecimal()})}", "no method 'power' taking (double, double)"),
    ("${oneDecimal:math('pow', ${two})}", "no method 'pow' taking (double, long); use toNumber() or toDecimal()"),
    ("${literal(9223372036854775807):math('addExact', 1)}", "math: long overflow"),
    ("${radix:fromRadix(10)}", "fromRadix: '1234A' is not a number in base 10"),
    ("${literal('0xFF'):fromRadix(16)}", "is not a number in base 16"),
    ("${test2:fromRadix(37)}", "radix 37 is outside 2 to 36"),
])
def test_number_errors(text, fragment):
    with pytest.raises(ExpressionError) as caught:
        evaluate(text, NUMBERS)
    assert fragment in caught.value.message


def test_get_uri_builds_and_quotes_like_java_uri():
    assert evaluate("${getUri('https', 'admin:admin', 'nifi.apache.org', '1234', '/path/data ', "
                    "'key=value &key2=value2', 'frag1')}", {}) == \
        "https://admin:admin@nifi.apache.org:1234/path/data%20?key=value%20&key2=value2#frag1"
    assert evaluate("${getUri('http', '', 'nifi.apache.org', '8080', '/docs.html', '', '')}", {}) == \
        "http://nifi.apache.org:8080/docs.html"
    assert evaluate("${getUri('http', '', 'nifi.apache.org', -1, '/', '', '')}", {}) == "http://nifi.apache.org/"
    assert evaluate("${getUri(${s}, '', ${h}, '', '/x', '', '')}", {"s": "ftp", "h": "example.com"}) == \
        "ftp://example.com/x"


def test_thread_names_the_evaluating_thread():
    seen = []
    worker = threading.Thread(target=lambda: seen.append(evaluate("${thread()}", {})), name="Timer-Driven-3")
    worker.start()
    worker.join()
    assert seen == ["Timer-Driven-3"]


def test_get_state_value_reads_the_state_offered():
    assert evaluate("${getStateValue('count'):plus(1)}", {}, state={"count": "41"}) == "42"
    assert evaluate("${getStateValue('absent'):isNull()}", {}, state={}) == "true"
    assert evaluate("${getStateValue('count'):isNull()}", {}) == "true"


def test_evaluate_el_string_evaluates_the_subject_text():
    attributes = {"template": "Hello ${name:toUpper()}", "name": "ann"}
    assert evaluate("${template:evaluateELString()}", attributes) == "Hello ANN"
    assert evaluate("${missing:evaluateELString()}", attributes) == ""
    with pytest.raises(ExpressionError) as caught:
        evaluate("${bad:evaluateELString()}", {"bad": "${x:nope()}"})
    assert "unknown function 'nope'" in caught.value.message
