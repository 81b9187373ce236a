"""NiFi 2's documented examples and edge cases for multi-attribute subjects, reducers, nulls, empty searches,
literals as templates, embedded subjects and parameters (expression-language-guide.adoc and NiFi's TestQuery)."""

import tracemalloc

import pytest

from engine.expression import ExpressionError, compile_expression, evaluate, expression_ranges
from engine.expression.functions import MAX_PAD_LENGTH

GUIDE = {"abc": "hello world", "xyz": "good bye world", "filename": "file.txt",
         "number_list": "1,2,3,4,5", "word_list": "the,and,or,not"}


@pytest.mark.parametrize("text, expected", [
    # anyAttribute / allAttributes, followed by non-boolean functions before the boolean one.
    ('${anyAttribute("abc", "xyz"):contains("bye")}', "true"),
    ('${anyAttribute("filename","xyz"):toUpper():contains("e")}', "false"),
    ('${allAttributes("abc", "xyz"):contains("world")}', "true"),
    ('${allAttributes("abc", "filename","xyz"):toUpper():contains("e")}', "false"),
    # Several patterns; each pattern's matches are visited.
    ('${anyMatchingAttribute("[ax].*"):contains(\'bye\')}', "true"),
    ('${anyMatchingAttribute(".*"):isNull()}', "false"),
    ('${allMatchingAttributes("[ax].*"):contains("world")}', "true"),
    ('${allMatchingAttributes(".*"):isNull()}', "false"),
    ('${allMatchingAttributes("f.*"):count()}', "1"),
    ('${allMatchingAttributes("a.*", "x.*"):count()}', "2"),
    ('${anyMatchingAttribute("nothing", "file.*"):endsWith(".txt")}', "true"),
    # Delineated values.
    ('${anyDelineatedValue("${number_list}", ","):contains("5")}', "true"),
    ('${anyDelineatedValue("this that and", ","):equals("${word_list}")}', "false"),
    ('${allDelineatedValues("${number_list}", ","):count()}', "5"),
    ('${allDelineatedValues("${number_list}", ","):matches("[0-9]+")}', "true"),
    ('${allDelineatedValues("${word_list}", ","):matches(\'e\')}', "false"),
    ('${allDelineatedValues(${number_list}, ","):count()}', "5"),
    ('${anyDelineatedValue(${number_list}, ","):plus(1):gt(5)}', "true"),
    ('${allDelineatedValues("a, b ,c", "\\s*,\\s*"):join("|")}', "a|b|c"),
    ('${allDelineatedValues("a,b,,", ","):count()}', "2"),  # Java's split drops trailing empty strings
    ('${anyDelineatedValue(${missing}, ","):isNull()}', "true"),
    # join and count reduce the values.
    ('${allMatchingAttributes("[ax].*"):substringBefore(" "):join("-")}', "hello-good"),
    ('${allAttributes("abc", "xyz"):join(" now ")}', "hello world now good bye world"),
    ('${allAttributes("abc", "non-existent-attr", "xyz"):count()}', "2"),
    ('${allMatchingAttributes(".*"):length():gt(10):count()}', "3"),
    ('${allAttributes("abc", "xyz"):contains("world"):count()}', "2"),  # the guide's table says 1; NiFi gives 2
    ('${allAttributes("x", "y"):join(",")}', ","),
    ('${filename:join(", ")}', "file.txt"),
    ('${missing:join(", ")}', ""),
    ('${filename:count()}', "1"),
    ('${missing:count()}', "0"),
    ('${literal(${allAttributes("abc", "xyz"):join(",")}):toUpper()}', "HELLO WORLD,GOOD BYE WORLD"),
])
def test_multi_attribute_examples(text, expected):
    assert evaluate(text, GUIDE) == expected


def test_count_examples_from_nifi_tests():
    attributes = {"a": "a", "b": "abc", "c": "        \n", "n1": "111", "n2": "222", "n3": "333333"}
    assert evaluate("${allMatchingAttributes( '.*' ):count()}", attributes) == "6"
    assert evaluate("${allMatchingAttributes( '.*' ):length():gt(2):count()}", attributes) == "5"
    assert evaluate("${allMatchingAttributes( 'n.*' ):plus(1):count()}", attributes) == "3"


@pytest.mark.parametrize("text, position, fragment", [
    ('${allAttributes("a"):plus(1)}', 21, "ending in a boolean function such as isEmpty() (or by join/count)"),
    ('${anyAttribute("a"):join(",")}', 20, "'join' needs allAttributes"),
    ('${allMatchingAttributes("a.*"):contains("2"):count():gt(2)}', 53, "no function may follow 'count'"),
    ('${a:join(","):toUpper()}', 14, "no function may follow 'join'"),
    ('${anyDelineatedValue("a")}', 2, "takes 2 arguments but got 1"),
])
def test_multi_attribute_misuse_is_refused_when_compiled(text, position, fragment):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert caught.value.position == position
    assert fragment in caught.value.message


@pytest.mark.parametrize("text, expected", [
    # substring out of range is empty, as is substring of null; a decimal index is truncated.
    ("${filename:substring(10, 20)}", ""),
    ("${filename:substring(10)}", ""),
    ("${filename:substring(-2)}", ""),
    ("${filename:substring(2, -2)}", ""),
    ("${filename:substring(1, 2)}", "i"),
    ("${filename:substring(4)}", "-255"),
    ("${filename:substring(1.9)}", "ile-255"),
    ("${missing:substring(1)}", ""),
    # Empty search strings.
    ("${filename:indexOf('')}", "0"),
    ("${filename:lastIndexOf('')}", "8"),
    ("${missing:indexOf('x')}", "-1"),
    ("${filename:replace('', '-')}", "-f-i-l-e---2-5-5-"),
    ("${filename:contains('')}", "true"),
    ("${filename:startsWith('')}", "true"),
    ("${filename:endsWith('')}", "true"),
    ("${filename:substringBefore('')}", "file-255"),
    ("${filename:substringBeforeLast('')}", "file-255"),
    ("${filename:substringAfter('')}", "file-255"),
    ("${filename:substringAfterLast('')}", "file-255"),
    ("${missing:substringBefore('-')}", ""),
    ("${missing:substringAfterLast('-')}", ""),
    # ifElse on a non-boolean subject: only 'true' is true; null takes the second branch.
    ("${bool:ifElse('a','b')}", "a"),
    ("${literal(true):ifElse('a','b')}", "a"),
    ("${missing:isNull():ifElse('file does not exist', 'located file')}", "file does not exist"),
    ("${missing:ifElse('found', 'not_found')}", "not_found"),
    ("${filename:ifElse('found', 'not_found')}", "not_found"),
    ("${filename:isNull():not():ifElse('found', 'not_found')}", "found"),
    ("${literal(true):ifElse(false, 'b')}", "false"),
    # toNumber truncates a decimal string; text that is no number is null.
    ("${decimal:toNumber()}", "2"),
    ("${negdecimal:toNumber()}", "-2"),
    ("${decimal:toNumber():plus(1)}", "3"),
    ("${filename:toNumber()}", ""),
    ("${filename:plus(1)}", ""),
    ("${filename:gt(1)}", "false"),
    ("${literal('0xF'):toNumber()}", "15"),
    ("${literal('0xF.Fp10'):toDecimal()}", "16320.0"),
    ("${literal('1.11E-12'):toDecimal()}", "1.11E-12"),
    ("${literal('.1E1'):toDecimal()}", "1.0"),
    ("${literal(10000000):toDecimal()}", "1.0E7"),
    ("${decimal:divide(0)}", "Infinity"),
    ("${literal(0.0):divide(0)}", "NaN"),
    # Booleans convert as Java's Boolean.valueOf: anything but 'true' is false.
    ("${filename:not()}", "true"),
    ("${bool:and(${filename})}", "false"),
    ("${missing:not()}", ""),
    # and/or: only a false (or true) subject decides; a null subject defers to the argument.
    ("${missing:and(true)}", "true"),
    ("${missing:or(false)}", "false"),
    ("${bool:and(${missing})}", ""),
    # Decimal literals in NiFi's forms.
    ("${literal(1.11E-12)}", "1.11E-12"),
    ("${literal(.1E1):plus(1)}", "2.0"),
    ("${literal(-2):multiply(1.5)}", "-3.0"),
    # Equality: null equals nothing, not even null.
    ("${missing:equals(${missing2})}", "false"),
    ("${literal(7):equals('7')}", "true"),
])
def test_edge_cases(text, expected):
    attributes = {"filename": "file-255", "bool": "true", "decimal": "2.5", "negdecimal": "-2.9"}
    assert evaluate(text, attributes) == expected


@pytest.mark.parametrize("text, expected", [
    ("${${abc}}", "hello"),
    ("${${attr:trim()}}", "My Value"),
    ("${${attr:trim():append('X'):prepend('Y')}}", "bingo"),
    ("${ 'abc${b}cba':substring(0, 1) }", "h"),
    ("${'$$${abc}'}", "good-bye"),
    ("${'$xyz'}", "good-bye"),
    ("${x:equals('${a}')}", "true"),
    ('${x:equals("${a}")}', "true"),
    ("${literal('SNAP$$$$$$$$$')}", "SNAP$$$$$$$$$"),
    ("${abc} owes me $$${'5'}", "xyz owes me $"),
])
def test_embedded_expressions_as_subjects_and_in_literals(text, expected):
    attributes = {"abc": "xyz", "xyz": "hello", "$xyz": "good-bye", "attr": "XX ", "XX": "My Value",
                  "YXXX": "bingo", "b": "x", "abcxcba": "hello", "x": "abc", "a": "abc"}
    assert evaluate(text, attributes) == expected


@pytest.mark.parametrize("text, expected", [
    ("${attr:padLeft(10, '@')}", "@@@@@hello"),
    ("${attr:padLeft(10)}", "_____hello"),
    ('${attr:padLeft(10, "xy")}', "xyxyxhello"),
    ('${attr:padLeft(10, "aVeryLongPaddingString")}', "aVeryhello"),
    ('${attr:padLeft(1, "a")}', "hello"),
    ('${attr:padLeft(-10, "a")}', "hello"),
    ("${emptyString:padLeft(10, '@')}", "@@@@@@@@@@"),
    ('${attr:padLeft(9999999999, "abc")}', "hello"),
    ('${nonExistingAttr:padLeft(10, "abc")}', ""),
    ("${attr:padRight(10, '@')}", "hello@@@@@"),
    ('${attr:padRight(10, "xy")}', "helloxyxyx"),
    ("${attr:padRight(10, '')}", "hello_____"),
    ('${attr:padRight(9999999999, "abc")}', "hello"),
])
def test_padding(text, expected):
    assert evaluate(text, {"attr": "hello", "emptyString": ""}) == expected


def test_padding_to_a_huge_length_is_refused_without_allocating_it():
    tracemalloc.start()
    try:
        with pytest.raises(ExpressionError) as caught:
            evaluate("${attr:padLeft(2147483647, 'x')}", {"attr": "hello"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 1024 * 1024
    assert f"exceeds the limit of {MAX_PAD_LENGTH}" in caught.value.message
    assert caught.value.message.startswith("padLeft:")
    assert len(evaluate("${attr:padRight(" + str(MAX_PAD_LENGTH) + ")}", {"attr": "hello"})) == MAX_PAD_LENGTH


def test_parameters_inside_expressions():
    parameters = {"test": "unit", "test param": "unit", "Date Format": "yyyy"}
    assert evaluate("${#{test}}", {}, parameters=parameters) == "unit"
    assert evaluate("${#{test}:append(' - '):append(#{test})}", {}, parameters=parameters) == "unit - unit"
    assert evaluate("${#{test}:toUpper()}", {}, parameters=parameters) == "UNIT"
    assert evaluate("${#{'test param'}}", {}, parameters=parameters) == "unit"
    assert evaluate('${#{"test param"}:append(\' - \'):append(#{\'test param\'})}', {},
                    parameters=parameters) == "unit - unit"
    assert evaluate("${#{test param}}", {}, parameters=parameters) == "unit"
    assert evaluate("${literal(1700000000000):format(#{Date Format}, 'UTC')}", {}, parameters=parameters) == "2023"
    # A parameter the context lacks is null, as in NiFi.
    assert evaluate("${#{absent}:isNull()}", {}, parameters=parameters) == "true"
    # Attributes never stand in for parameters.
    assert evaluate("${#{test}}", {"test": "attribute"}, parameters={}) == ""


def test_expression_ranges_locate_parameters_the_expression_resolves():
    text = "#{dir}/${#{name}:toUpper()}-${a:equals('}')}$${x}#{tail}"
    ranges = expression_ranges(text)
    assert [text[start:end] for start, end in ranges] == ["${#{name}:toUpper()}", "${a:equals('}')}"]
    inside = [start for start, _ in ranges]
    assert text.index("#{name}") > inside[0] and text.index("#{tail}") > ranges[-1][1]
    assert expression_ranges("${a} ${b:nope(") == [(0, 4)]


@pytest.mark.parametrize("text, position, fragment", [
    ("${#{}}", 4, "expected a parameter name"),
    ("${#{a/b}}", 5, "expected '}' to close the parameter reference"),
    ("${#{abc", 0, "unterminated '${'"),
])
def test_malformed_parameter_references(text, position, fragment):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert caught.value.position == position
    assert fragment in caught.value.message


def test_literal_errors_point_inside_the_quoted_template():
    with pytest.raises(ExpressionError) as caught:
        compile_expression("${a:equals('x${b:nope()}')}")
    assert caught.value.position == 17
    assert "unknown function 'nope'" in caught.value.message
