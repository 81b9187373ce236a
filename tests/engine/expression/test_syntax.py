import pytest

from engine.expression import CompiledExpression, ExpressionError, compile_expression, evaluate

ATTRS = {"filename": "data.csv", "a": "x", "b": "x", "c": "y", "my attr": "spaced", "1st": "first",
         "mime.type": "text/csv", "absolute.path": "/in"}


@pytest.mark.parametrize("text, expected", [
    ("plain text", "plain text"),
    ("", ""),
    ("${filename}", "data.csv"),
    ("file-${filename}.txt", "file-data.csv.txt"),
    ("/out/${mime.type}/${filename}", "/out/text/csv/data.csv"),
    ("${a}${b}${c}", "xxy"),
    ("${missing}", ""),
    ("[${missing}]", "[]"),
    ("${ filename : toUpper( ) }", "DATA.CSV"),
    ("${filename:substringBefore('.'):toUpper():append('-'):append(${c})}", "DATA-y"),
    ("${a:equals(${b})}", "true"),
    ("${a:equals(${c})}", "false"),
    ("${a:equals(${c:replace('y', 'x')})}", "true"),
    ("${'my attr'}", "spaced"),
    ('${"my attr":toUpper()}', "SPACED"),
    ("${'1st'}", "first"),
    ("${literal(\"it's\")}", "it's"),
    ("${literal('it\\'s')}", "it's"),
    ("${literal('a\\tb\\nc\\\\d\\\"')}", 'a\tb\nc\\d"'),
    ("${literal('}{$:,()')}", "}{$:,()"),
    # Quoted strings are templates, as in NiFi: embedded expressions are evaluated, $$ escapes them.
    ("${literal(\"${a}\")}", "x"),
    ("${literal('$${a}')}", "${a}"),
    ("${a:equals('${b}')}", "true"),
    ("$${a}", "${a}"),
    ("$$${a}", "$x"),
    ("$$$${a}", "$${a}"),
    ("cost $5 and $$10", "cost $5 and $$10"),
    ("ends with $", "ends with $"),
    ("{a}", "{a}"),
    ("${a:append('}')}", "x}"),
])
def test_syntax(text, expected):
    assert evaluate(text, ATTRS) == expected


def test_compiled_once_evaluated_many_times():
    compiled = compile_expression("${filename:toUpper()}")
    assert isinstance(compiled, CompiledExpression)
    assert not compiled.is_literal
    assert compiled.evaluate({"filename": "a"}) == "A"
    assert compiled.evaluate({"filename": "b"}) == "B"
    assert compile_expression("${filename:toUpper()}") is compiled


def test_literal_values():
    assert compile_expression("no expressions").is_literal
    assert compile_expression("escaped $${a}").is_literal
    assert compile_expression("escaped $${a}").evaluate({"a": "x"}) == "escaped ${a}"
    assert not compile_expression("${a}").is_literal


def test_variables_are_consulted_after_attributes():
    compiled = compile_expression("${a}-${env}")
    assert compiled.evaluate({"a": "attr"}, {"a": "var", "env": "prod"}) == "attr-prod"
    assert compiled.evaluate({}, {"a": "var"}) == "var-"


@pytest.mark.parametrize("text, position, fragment", [
    ("abc ${filename", 4, "unterminated '${'"),
    ("${filename:toUpper(", 0, "unterminated '${'"),
    ("x${a:equals(${b", 12, "unterminated '${'"),
    ("${a:equals(${b}", 0, "unterminated '${'"),
    ("${literal('abc)}", 10, "unterminated string"),
    ('${a:append("x)}', 11, "unterminated string"),
    ("${filename:toUpperr()}", 11, "unknown function 'toUpperr'"),
    ("${ foo() }", 3, "unknown function 'foo'"),
    ("${filename:toUpper(1)}", 11, "takes no arguments but got 1"),
    ("${filename:substring()}", 11, "takes 1 to 2 arguments but got 0"),
    ("${filename:replace('a')}", 11, "takes 2 arguments but got 1"),
    ("${filename:in()}", 11, "takes at least 1 argument but got 0"),
    ("${filename:now()}", 11, "'now' does not take a subject"),
    ("${toUpper()}", 2, "'toUpper' needs a subject"),
    ("${filename:length():not()}", 20, "cannot be applied to a Number"),
    ("${filename:isEmpty():plus(1)}", 21, "cannot be applied to a Boolean"),
    ("${now():and(true)}", 8, "cannot be applied to a Date"),
    ("${filename:substring('x')}", 21, "argument 1 of 'substring'"),
    ("${filename:plus(true)}", 16, "cannot convert true to a number"),
    ("${filename:plus(${a:isEmpty()})}", 16, "argument 1 of 'plus' must be a Number"),
    ("${filename:matches('(')}", 19, "invalid regular expression"),
    ("${filename:format('yyyy-bb')}", 18, "unsupported letter 'b'"),
    ("${filename:format('yyyy', 'Mars/Base')}", 26, "unknown time zone"),
    ("${filename toUpper()}", 11, "expected ':' or '}'"),
    ("${filename:}", 11, "expected a function name"),
    ("${filename:toUpper}", 18, "expected '(' after 'toUpper'"),
    ("${filename:append('a' 'b')}", 22, "expected ',' or ')'"),
    ("${filename:append(abc)}", 18, "expected an argument"),
    ("${}", 2, "expected an attribute name or function"),
    ("${1st}", 2, "must be quoted"),
    ("${anyAttribute('a')}", 2, "must be followed by functions ending in a boolean function"),
    ("${anyAttribute('a'):toUpper()}", 20, "must be followed by functions ending in a boolean function"),
])
def test_malformed_expressions(text, position, fragment):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert caught.value.position == position
    assert fragment in caught.value.message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("text, attrs, position, fragment", [
    ("${a:divide(0)}", {"a": "1"}, 4, "divide: division by zero"),
    ("${a:mod(0)}", {"a": "1"}, 4, "mod: division by zero"),
    ("${a:toDate('yyyy-MM-dd')}", {"a": "03/05/2024"}, 4, "toDate: '03/05/2024' does not match"),
    ("${a:format('yyyy')}", {"a": "soon"}, 4, "format:"),
    ("${a:base64Decode()}", {"a": "***"}, 4, "base64Decode: invalid Base64"),
    ("${a:hash('nope')}", {"a": "x"}, 4, "hash: Invalid hash algorithm: nope"),
    ("${a:matches(${b})}", {"a": "x", "b": "("}, 12, "invalid regular expression"),
    ("x ${a:unescapeJson()}", {"a": "\\u12"}, 6, "unescapeJson: Less than 4 hex digits"),
])
def test_evaluation_errors(text, attrs, position, fragment):
    compiled = compile_expression(text)
    with pytest.raises(ExpressionError) as caught:
        compiled.evaluate(attrs)
    assert caught.value.position == position
    assert fragment in caught.value.message
