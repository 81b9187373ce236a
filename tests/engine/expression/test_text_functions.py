"""getDelimitedField, trimDelimitedList, compactDelimitedList, unique, repeat, replaceByPattern, UUID3, UUID5."""

import pytest

from engine.expression import ExpressionError, evaluate

ATTRS = {
    "line": '"Jacobson, John", 32, Mr.',
    "altLine": "Jacobson, John|32|Mr.",
    "csv": "Name, Age, Title",
    "under": "_Name (Last, First)_, Age, Title",
    "escaped": "Name (Last\\, First), Age, Title",
    "quotedEscapes": 'col 1, col 2, "The First, Second, and \\"Last\\" Column", Last',
    "path": "/my/path",
    "my_list": ",,a,,b,,c,",
    "my_list2": ",,a,,b,,c,,",
    "tags": "|alpha||beta|||gamma|",
    "path_parts": ";;alpha;;beta;;",
    "messy": " ,,a,,b,, ",
    "colors": "red,blue,red,green,blue,yellow",
    "paths": "C:\\Users\\test;D:\\Data;C:\\Users\\test;E:\\Backup",
    "str": "abc",
    "value": "myValue2",
    "attr": "string value",
    "empty": "",
    "only_delims": ",,,",
}

CASES = [
    # getDelimitedField: the guide's examples and NiFi's own tests.
    ("${line:getDelimitedField(2)}", " 32"),
    ("${line:getDelimitedField(2):trim()}", "32"),
    ("${line:getDelimitedField(1)}", '"Jacobson, John"'),
    ("${line:getDelimitedField(1, ',', '\"', '\\\\', true)}", "Jacobson, John"),
    ("${altLine:getDelimitedField(1, '|')}", "Jacobson, John"),
    ("${csv:getDelimitedField(3)}", " Title"),
    ("${csv:getDelimitedField(12)}", ""),
    ("${csv:getDelimitedField(0)}", ""),
    ("${csv:getDelimitedField(-1)}", ""),
    ("${under:getDelimitedField(1)}", "_Name (Last"),
    ("${under:getDelimitedField(1, ',', '_')}", "_Name (Last, First)_"),
    ("${escaped:getDelimitedField(1)}", "Name (Last\\, First)"),
    ("${quotedEscapes:getDelimitedField(3):trim()}", '"The First, Second, and \\"Last\\" Column"'),
    ("${quotedEscapes:getDelimitedField(3, ',', '\"', '\\\\', true):trim()}", 'The First, Second, and "Last" Column'),
    ("${path:getDelimitedField(1, '/')}", ""),
    ("${path:getDelimitedField(3, '/')}", "path"),
    ("${missing:getDelimitedField(1)}", ""),
    ("${missing:getDelimitedField(1):isNull()}", "false"),
    ("${empty:getDelimitedField(1)}", ""),
    # trimDelimitedList and compactDelimitedList: the guide's examples.
    ("${my_list2:trimDelimitedList(',')}", "a,,b,,c"),
    ("${path_parts:trimDelimitedList(';')}", "alpha;;beta"),
    ("${messy:trim():trimDelimitedList(',')}", "a,,b"),
    ("${only_delims:trimDelimitedList(',')}", ""),
    ("${my_list:trimDelimitedList('')}", ",,a,,b,,c,"),
    ("${missing:trimDelimitedList(','):isNull()}", "false"),
    ("${my_list:compactDelimitedList(',')}", "a,b,c"),
    ("${tags:compactDelimitedList('|')}", "alpha|beta|gamma"),
    ("${messy:trim():compactDelimitedList(',')}", "a,b"),
    ("${my_list2:compactDelimitedList(',,')}", "a,,b,,c"),
    ("${my_list:compactDelimitedList(${missing})}", ",,a,,b,,c,"),
    ("${missing:compactDelimitedList(',')}", ""),
    # unique: the guide's examples and special cases.
    ("${colors:unique(',')}", "red,blue,green,yellow"),
    ("${colors:unique(';')}", "red,blue,red,green,blue,yellow"),
    ("${paths:unique(';')}", "C:\\Users\\test;D:\\Data;E:\\Backup"),
    ("${literal('a,,b,,c'):unique(',')}", "a,,b,c"),
    ("${colors:unique('')}", "red,blue,red,green,blue,yellow"),
    ("${missing:unique(','):isNull()}", "false"),
    # repeat.
    ("${str:repeat(1)}", "abc"),
    ("${str:repeat(2)}", "abcabc"),
    ("${str:repeat(${str:length()})}", "abcabcabc"),
    ("${str:repeat(2, 2)}", "abcabc"),
    ("${missing:repeat(2)}", ""),
    # replaceByPattern: the guide's examples and NiFi's tests.
    ("${str:replaceByPattern('abc:xyz,foo:poo')}", "xyz"),
    ("${str:replaceByPattern('foo:poo')}", "abc"),
    ("${str:replaceByPattern('a.c:xyz,.*:foo')}", "xyz"),
    ("${value:replaceByPattern('')}", "myValue2"),
    ("${value:replaceByPattern(${doesnotexist})}", "myValue2"),
    ("${value:replaceByPattern('myValue[3-4]:test,abc:foo')}", "myValue2"),
    ("${value:replaceByPattern('myValue[3-4]:test, abc:foo, myValue[1-4]:xyz')}", "xyz"),
    ("${value:replaceByPattern('myValue1:test,myValue2:test,myValue3:test')}", "test"),
    ("${value:replaceByPattern(${literal('myValue[3-4]:test'):append(','):append(' .*:foo')})}", "foo"),
    ("${value:replaceByPattern('[unclosed:x,.*:y')}", "y"),
    ("${missing:replaceByPattern('.*:x'):isNull()}", "true"),
    # UUID3 and UUID5: the guide's examples.
    ("${attr:UUID3('b9e81de3-7047-4b5e-a822-8fff5b49f808')}", "bf0ea246-a177-3300-bd7e-d4c9e973dc6f"),
    ("${attr:UUID5('245b55a8-397d-4480-a41e-16603c8cf9ad')}", "4d111477-5100-5f2d-ae79-b38bbe15aa78"),
    ("${attr:UUID5('245B55A8-397D-4480-A41E-16603C8CF9AD')}", "4d111477-5100-5f2d-ae79-b38bbe15aa78"),
    ("${attr:UUID3(${missing})}", "42fb09b6-3154-3459-8011-f9c8c3ce114c"),
    ("${attr:UUID5(${missing})}", "69e0bc1a-100d-5b92-a4b8-19e5372216fd"),
    ("${missing:UUID5('245b55a8-397d-4480-a41e-16603c8cf9ad'):isNull()}", "true"),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_function_results(text, expected):
    assert evaluate(text, ATTRS) == expected


def test_repeat_with_a_range_picks_a_count_within_it():
    seen = {evaluate("${str:repeat(1, 3)}", ATTRS) for _ in range(200)}
    assert seen == {"abc", "abcabc", "abcabcabc"}


@pytest.mark.parametrize("text, message", [
    ("${csv:getDelimitedField(1, '')}", "the delimiter was not specified"),
    ("${csv:getDelimitedField(1, ',,')}", 'the delimiter evaluated to ",,", but only a single character is allowed'),
    ("${csv:getDelimitedField(1, ',', '')}", "the quote character (which character is used to enclose"),
    ("${csv:getDelimitedField(1, ',', 'ab')}", "only a single character is allowed"),
    ("${csv:getDelimitedField(1, ',', '\"', '')}", "the escape character (which character is used to escape"),
    ("${csv:getDelimitedField(1, ',', ',')}", "the quote character and the delimiter are the same"),
    ("${csv:getDelimitedField(1, ',', '\"', '\"')}", "the quote character and the escape character are the same"),
    ("${csv:getDelimitedField(1, ',', '\"', ',')}", "the delimiter and the escape character are the same"),
    ("${csv:getDelimitedField(${missing})}", "the index (which field to obtain) was not specified"),
    ("${str:repeat(0)}", "Number of repeats must be > 0"),
    ("${str:repeat(-1, 2)}", "Minimum number of repeats must be > 0"),
    ("${str:repeat(3, 2)}", "Min repeats must not be greater than max repeats"),
    ("${str:replaceByPattern('abc')}", "is not of the form pattern:replacement"),
    ("${attr:UUID3('')}", "Invalid UUID string: "),
    ("${attr:UUID5('not-a-uuid')}", "Invalid UUID string: not-a-uuid"),
])
def test_bad_arguments_fail_with_nifis_message(text, message):
    with pytest.raises(ExpressionError) as caught:
        evaluate(text, ATTRS)
    assert message in str(caught.value)


def test_bad_argument_counts_are_refused_at_compile_time():
    for text in ("${str:repeat()}", "${str:repeat(1, 2, 3)}", "${str:unique()}", "${str:UUID3()}",
                 "${csv:getDelimitedField()}", "${csv:getDelimitedField(1, ',', '\"', '\\\\', true, 1)}"):
        with pytest.raises(ExpressionError, match="takes"):
            evaluate(text, ATTRS)
