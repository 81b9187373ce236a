"""The escape/unescape family, with Commons Text StringEscapeUtils' results."""

import pytest

from engine.expression import ExpressionError, evaluate

ATTRS = {
    "message": 'He didn\'t say, "Stop!"',
    "escapedMessage": 'He didn\'t say, \\"Stop!\\"',
    "bread": '"bread" & "butter"',
    "breadEntities": "&quot;bread&quot; &amp; &quot;butter&quot;",
    "left": "But finally, she left",
    "quotedLeft": '"But finally, she left"',
    "quotes": 'making air "QUOTES".',
    "mm": "M & M",
    "iexcl": "special ¡",
    "clubs": "special ♣",
    "controls": "tab\there\nnew\rret\bback\fform\x01one\x7fdel/slash\\back",
    "unicode": "é€😀",
    "xmlControls": "a\x00b\x0bc\x1fd\te\x80f\x85g\ufffeh",
    "javaQuote": "it\\'s \\q",
    "trailingBackslash": "end\\",
    "empty": "",
}

CASES = [
    # The guide's examples.
    ("${message:escapeJson()}", 'He didn\'t say, \\"Stop!\\"'),
    ("${escapedMessage:unescapeJson()}", 'He didn\'t say, "Stop!"'),
    ("${bread:escapeXml()}", "&quot;bread&quot; &amp; &quot;butter&quot;"),
    ("${breadEntities:unescapeXml()}", '"bread" & "butter"'),
    ("${left:escapeCsv()}", '"But finally, she left"'),
    ("${quotedLeft:unescapeCsv()}", "But finally, she left"),
    ("${bread:escapeHtml3()}", "&quot;bread&quot; &amp; &quot;butter&quot;"),
    ("${bread:escapeHtml4()}", "&quot;bread&quot; &amp; &quot;butter&quot;"),
    ("${breadEntities:unescapeHtml3()}", '"bread" & "butter"'),
    ("${breadEntities:unescapeHtml4()}", '"bread" & "butter"'),
    # NiFi's own tests.
    ("${quotes:escapeJson()}", 'making air \\"QUOTES\\".'),
    ("${mm:escapeXml()}", "M &amp; M"),
    ("${quotes:escapeCsv()}", '"making air ""QUOTES""."'),
    ("${iexcl:escapeHtml3()}", "special &iexcl;"),
    ("${clubs:escapeHtml4()}", "special &clubs;"),
    # escapeJson: controls by name or \uXXXX, slash escaped, all outside printable ASCII as UTF-16 escapes.
    ("${controls:escapeJson()}",
     "tab\\there\\nnew\\rret\\bback\\fform\\u0001one\\u007Fdel\\/slash\\\\back"),
    ("${unicode:escapeJson()}", "\\u00E9\\u20AC\\uD83D\\uDE00"),
    ("${unicode:escapeJson():unescapeJson()}", "é€😀"),
    ("${controls:escapeJson():unescapeJson()}", "tab\there\nnew\rret\bback\fform\x01one\x7fdel/slash\\back"),
    # unescapeJson is Java's unescaper: octal, \u with extra u's, \' and a dropped lone backslash.
    ("${literal('\\\\101\\\\60\\\\0'):unescapeJson()}", "A0\x00"),
    ("${literal('\\\\uu0041\\\\u+0042'):unescapeJson()}", "AB"),
    ("${javaQuote:unescapeJson()}", "it's q"),
    ("${trailingBackslash:unescapeJson()}", "end"),
    # escapeXml (XML 1.0): &apos;, C1 controls as references, characters XML forbids removed.
    ("${literal(\"it's\"):escapeXml()}", "it&apos;s"),
    ("${xmlControls:escapeXml()}", "abcd\te&#128;f\x85gh"),
    ("${unicode:escapeXml()}", "é€😀"),
    # unescapeXml: the five entities and numeric references, nothing else.
    ("${literal('&apos;&#65;&#x42;&#X43;&eacute;&#;&#65'):unescapeXml()}", "'ABC&eacute;&#;&#65"),
    ("${literal('&#x1F600;'):unescapeXml()}", "😀"),
    ("${literal('&#12a;&#xZ;'):unescapeXml()}", "&#12a;&#xZ;"),
    # escapeHtml3 has only ISO-8859-1's entities; escapeHtml4 all of HTML 4.01's; neither escapes '.
    ("${literal(\"é€ it's\"):escapeHtml3()}", "&eacute;€ it's"),
    ("${literal(\"é€ it's\"):escapeHtml4()}", "&eacute;&euro; it's"),
    ("${literal('&eacute;&euro;&apos;&#8364;'):unescapeHtml3()}", "é&euro;&apos;€"),
    ("${literal('&eacute;&euro;&apos;&#8364;&EACUTE;'):unescapeHtml4()}", "é€&apos;€&EACUTE;"),
    # escapeCsv / unescapeCsv (RFC 4180).
    ("${literal('plain'):escapeCsv()}", "plain"),
    ("${literal('two\nlines'):escapeCsv()}", '"two\nlines"'),
    ("${literal('\"a\"\"b\"'):unescapeCsv()}", 'a"b'),
    ("${literal('\"a,\"\"b\"'):unescapeCsv()}", 'a,"b'),
    ("${literal('\"'):unescapeCsv()}", '"'),
    ("${literal('x\"'):unescapeCsv()}", 'x"'),
    # Empty and null subjects give the empty string.
    ("${empty:escapeJson()}", ""),
    ("${missing:escapeJson()}", ""),
    ("${missing:escapeXml():isNull()}", "false"),
    ("${missing:escapeCsv():isNull()}", "false"),
    ("${missing:escapeHtml3():isNull()}", "false"),
    ("${missing:escapeHtml4():isNull()}", "false"),
    ("${missing:unescapeJson():isNull()}", "false"),
    ("${missing:unescapeXml():isNull()}", "false"),
    ("${missing:unescapeCsv():isNull()}", "false"),
    ("${missing:unescapeHtml3():isNull()}", "false"),
    ("${missing:unescapeHtml4():isNull()}", "false"),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_function_results(text, expected):
    assert evaluate(text, ATTRS) == expected


@pytest.mark.parametrize("text, message", [
    ("${literal('\\\\u12'):unescapeJson()}", "Less than 4 hex digits in unicode value: '\\u12'"),
    ("${literal('\\\\uZZZZ'):unescapeJson()}", "Unable to parse unicode value: ZZZZ"),
])
def test_a_broken_unicode_escape_is_an_error(text, message):
    with pytest.raises(ExpressionError) as caught:
        evaluate(text, ATTRS)
    assert message in str(caught.value)


def test_escape_functions_take_no_arguments():
    with pytest.raises(ExpressionError, match="takes no arguments"):
        evaluate("${message:escapeHtml4('x')}", ATTRS)
