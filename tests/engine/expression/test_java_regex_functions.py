"""Expression Language functions that take a regular expression use Java's syntax and meaning."""

import pytest

from engine.expression import evaluate

ATTRS = {"name": "Élan", "lower": "élan", "text": "a,b!c§", "greek": "abc αβγ", "word": "hello",
         "spaced": "a\xa0b c", "cafe": "café", "path": "a.*b.*", "lines": "x\r\ny"}


@pytest.mark.parametrize("expression, expected", [
    (r"${name:matches('\p{Lu}\p{Ll}+')}", "true"),
    (r"${lower:matches('\p{Lu}\p{Ll}+')}", "false"),
    (r"${text:replaceAll('\p{Punct}', '')}", "abc§"),
    (r"${text:replaceAll('(?U)\p{Punct}', '')}", "abc"),
    (r"${greek:find('\p{IsGreek}')}", "true"),
    (r"${greek:replaceAll('\p{InGreek}+', 'G')}", "abc G"),
    (r"${greek:replaceAll('\P{L}', '')}", "abcαβγ"),
    (r"${word:replaceAll('[a-z&&[^aeiou]]', '*')}", "*e**o"),
    (r"${path:replaceFirst('\Q.*\E', '!')}", "a!b.*"),
    (r"${cafe:matches('\w+')}", "false"),
    (r"${cafe:matches('(?U)\w+')}", "true"),
    (r"${spaced:replaceAll('\h', '_')}", "a_b_c"),
    (r"${lines:replaceAll('\R', '|')}", "x|y"),
    (r"${name:matches('(?i)élan')}", "false"),
    (r"${name:matches('(?iu)élan')}", "true"),
    (r"${name:replaceAll('(?<first>\p{L})(\p{L}+)', '$2$1')}", "lanÉ"),
])
def test_regular_expressions_in_functions(expression, expected):
    assert evaluate(expression, ATTRS) == expected
