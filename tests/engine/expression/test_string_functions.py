"""String and encoding functions whose edge cases follow NiFi's (Java's) behaviour."""

import pytest

from engine.expression import ExpressionError, evaluate

ATTRS = {
    "url": "https://nifi.apache.org/some value with spaces",
    "encoded": "https%3A%2F%2Fnifi.apache.org%2Fsome+value+with+spaces",
    "encoded20": "https://nifi.apache.org/some%20value%20with%20spaces",
    "payload": "admin:admin",
    "hashed": "string value",
    "controls": "\x01\x00 text \x1f\t",
    "nbsp": "\u00a0",
    "emspace": "\u2003\t",
    "name": "a.b.c",
}

CASES = [
    # urlEncode / urlDecode: the guide's examples; Java's encoder escapes '~' and keeps '*'.
    ("${url:urlEncode()}", "https%3A%2F%2Fnifi.apache.org%2Fsome+value+with+spaces"),
    ("${literal('~*é'):urlEncode()}", "%7E*%C3%A9"),
    ("${encoded:urlDecode()}", "https://nifi.apache.org/some value with spaces"),
    ("${encoded20:urlDecode()}", "https://nifi.apache.org/some value with spaces"),
    ("${literal('%FF'):urlDecode()}", "\ufffd"),
    # base64: the guide's examples; Java's decoder does not need padding and replaces bad UTF-8.
    ("${payload:base64Encode()}", "YWRtaW46YWRtaW4="),
    ("${literal('YWRtaW46YWRtaW4='):base64Decode()}", "admin:admin"),
    ("${literal('YWRtaW46YWRtaW4'):base64Decode()}", "admin:admin"),
    ("${literal('/w=='):base64Decode()}", "\ufffd"),
    # hash: the guide's example and Java's algorithm names in any case.
    ("${hashed:hash('SHA-256')}", "9b6a1a9167a5caf3f5948413faa89e0ec0de89e12bef55327442e60dcc0e8c9b"),
    ("${hashed:hash('sha-256')}", "9b6a1a9167a5caf3f5948413faa89e0ec0de89e12bef55327442e60dcc0e8c9b"),
    ("${literal('abc'):hash('SHA')}", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    ("${literal('abc'):hash('SHA-1')}", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    ("${literal('abc'):hash('SHA3-256')}", "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"),
    ("${literal('abc'):hash('SHA-512/256')}", "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23"),
    # trim is Java's: every control character and the space go, nothing else.
    ("${controls:trim()}", "text"),
    ("${nbsp:trim():length()}", "1"),
    # isEmpty and replaceEmpty use Java's isBlank: a non-breaking space is not blank, an em space is.
    ("${nbsp:isEmpty()}", "false"),
    ("${emspace:isEmpty()}", "true"),
    ("${emspace:replaceEmpty('x')}", "x"),
    ("${nbsp:replaceEmpty('x')}", "\u00a0"),
    # A null subject: substringBefore/After give the empty string, indexOf/lastIndexOf -1.
    ("${missing:substringBefore('.'):isNull()}", "false"),
    ("${missing:substringBeforeLast('.'):isNull()}", "false"),
    ("${missing:substringAfter('.'):isNull()}", "false"),
    ("${missing:substringAfterLast('.'):isNull()}", "false"),
    ("${missing:indexOf('.')}", "-1"),
    ("${missing:lastIndexOf('.')}", "-1"),
    ("${name:substringBeforeLast('.')}", "a.b"),
    ("${name:substringAfterLast('.')}", "c"),
    ("${missing:urlEncode():isNull()}", "true"),
    ("${missing:hash('MD5'):isNull()}", "true"),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_function_results(text, expected):
    assert evaluate(text, ATTRS) == expected


@pytest.mark.parametrize("text, message", [
    ("${literal('100%'):urlDecode()}", "a % must be followed by two hex digits"),
    ("${literal('%zz'):urlDecode()}", "illegal escape '%zz'"),
    ("${literal('not base64!'):base64Decode()}", "invalid Base64 value"),
    ("${literal('abcde'):base64Decode()}", "invalid Base64 value"),
    ("${hashed:hash('blake2b')}", "Invalid hash algorithm: blake2b not in set [MD5, SHA, "),
    ("${hashed:hash('')}", "Invalid hash algorithm: "),
])
def test_bad_values_fail_with_a_clear_message(text, message):
    with pytest.raises(ExpressionError) as caught:
        evaluate(text, ATTRS)
    assert message in str(caught.value)
