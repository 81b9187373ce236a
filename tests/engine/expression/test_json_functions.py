"""isJson and the jsonPath family, against NiFi's address-book examples."""

import json

import pytest

from engine.expression import ExpressionError, compile_expression, evaluate
from engine.jackson import compact as to_json
from engine.java_text import java_double

ADDRESS_BOOK = """{
     "firstName": "John",
     "lastName": "Smith",
     "age": 25,
     "voter" : true,
     "height" : 6.1,
     "address" : {
         "streetAddress": "21 2nd Street",
         "city": "New York",
         "state": "NY",
         "postalCode": "10021-3100"
     },
     "phoneNumbers": [
         { "type": "home", "number": "212 555-1234" },
         { "type": "office", "number": "646 555-4567" }
     ],
     "nicknames" : []
 }"""

ATTRS = {
    "json": ADDRESS_BOOK,
    "jsonObj": '{"name":"John", "age":30, "car":null}',
    "jsonObjWithSpaces": '  {"name":"John", "age":30, "car":null}  ',
    "jsonObjMissingStartingBrace": '"name":"John", "age":30, "car":null}',
    "jsonObjMissingEndingBrace": '{"name":"John", "age":30, "car":null',
    "jsonArray": '["Ford", "BMW", "Fiat"]',
    "jsonArrayMissingStartingBracket": '"Ford", "BMW", "Fiat"]',
    "jsonArrayMissingEndingBracket": '["Ford", "BMW", "Fiat"',
    "emptyQuotedString": '""',
    "quotedString": '"someString"',
    "integer": "1234",
    "decimal": "18.36",
    "trueAttr": "true",
    "nullAttr": "null",
    "notJson": "[}",
    "empty": "",
    "unicode": '{"name":"Zoë","path":"a/b"}',
    "big": '{"n":1e10,"small":0.0001,"whole":3.0}',
    "path": "$.address.city",
}

CASES = [
    # isJson: the guide's examples.
    ("${jsonObj:isJson()}", "true"),
    ("${jsonObjWithSpaces:isJson()}", "true"),
    ("${jsonObjMissingStartingBrace:isJson()}", "false"),
    ("${jsonObjMissingEndingBrace:isJson()}", "false"),
    ("${jsonArray:isJson()}", "true"),
    ("${jsonArrayMissingStartingBracket:isJson()}", "false"),
    ("${jsonArrayMissingEndingBracket:isJson()}", "false"),
    ("${someAttribute:isJson()}", "false"),
    ("${emptyQuotedString:isJson()}", "false"),
    ("${quotedString:isJson()}", "false"),
    ("${integer:isJson()}", "false"),
    ("${decimal:isJson()}", "false"),
    ("${trueAttr:isJson()}", "false"),
    ("${nullAttr:isJson()}", "false"),
    ("${notJson:isJson()}", "false"),
    ("${integer:toNumber():isJson()}", "false"),
    # jsonPath: scalars as text, a one-element result as its element, anything else as JSON.
    ("${json:jsonPath('$.firstName')}", "John"),
    ("${json:jsonPath('$.age')}", "25"),
    ("${json:jsonPath('$.voter')}", "true"),
    ("${json:jsonPath('$.height')}", "6.1"),
    ("${json:jsonPath('$.address.postalCode')}", "10021-3100"),
    ("${json:jsonPath(\"$.phoneNumbers[?(@.type=='home')].number\")}", "212 555-1234"),
    ("${json:jsonPath(\"$.phoneNumbers[?(@.type=='office')].number\")}", "646 555-4567"),
    ("${json:jsonPath('$.phoneNumbers[*].type')}", '["home","office"]'),
    ("${json:jsonPath('$.address')}",
     '{"streetAddress":"21 2nd Street","city":"New York","state":"NY","postalCode":"10021-3100"}'),
    ("${json:jsonPath('$.nicknames')}", "[]"),
    ("${json:jsonPath(\"$.phoneNumbers[?(@.type=='fax')].number\")}", "[]"),
    ("${json:jsonPath('$.missingpath')}", ""),
    ("${json:jsonPath('$.phoneNumbers[7]')}", ""),
    ("${json:jsonPath('$.phoneNumbers.length()')}", "2"),
    ("${json:jsonPath(${path})}", "New York"),
    ("${jsonObj:jsonPath('$.car')}", ""),
    ("${unicode:jsonPath('$')}", '{"name":"Zoë","path":"a/b"}'),
    ("${big:jsonPath('$.n')}", "1.0E10"),
    ("${big:jsonPath('$.small')}", "1.0E-4"),
    ("${big:jsonPath('$.whole')}", "3.0"),
    ("${jsonArray:jsonPath('$[1]')}", "BMW"),
    # jsonPathDelete.
    ("${json:jsonPathDelete('$.firstName'):jsonPath('$.firstName')}", ""),
    ("${json:jsonPathDelete('$.firstName'):jsonPath('$.lastName')}", "Smith"),
    ("${json:jsonPathDelete(\"$.phoneNumbers[?(@.type=='home')]\")"
     ":jsonPath(\"$.phoneNumbers[?(@.type=='home')].number\")}", "[]"),
    ("${json:jsonPathDelete(\"$.phoneNumbers[?(@.type=='home')]\"):jsonPath('$.phoneNumbers[0].type')}", "office"),
    ("${jsonArray:jsonPathDelete('$[0]')}", '["BMW","Fiat"]'),
    ("${jsonArray:jsonPathDelete('$')}", ""),
    # jsonPathSet keeps the value's type.
    ("${json:jsonPathSet('$.firstName', 'James'):jsonPath('$.firstName')}", "James"),
    ("${json:jsonPathSet('$.age', '35'):jsonPath('$.age')}", "35"),
    ("${jsonObj:jsonPathSet('$.age', '35')}", '{"name":"John","age":"35","car":null}'),
    ("${jsonObj:jsonPathSet('$.age', 31)}", '{"name":"John","age":31,"car":null}'),
    ("${jsonObj:jsonPathSet('$.age', 5.9)}", '{"name":"John","age":5.9,"car":null}'),
    ("${jsonObj:jsonPathSet('$.car', false)}", '{"name":"John","age":30,"car":false}'),
    ("${jsonObj:jsonPathSet('$.age', ${integer:toNumber()})}", '{"name":"John","age":1234,"car":null}'),
    ("${jsonObj:jsonPathSet('$.age', ${integer})}", '{"name":"John","age":"1234","car":null}'),
    ("${jsonObj:jsonPathSet('$.missing-path', 5.9)}", '{"name":"John","age":30,"car":null}'),
    ("${jsonArray:jsonPathSet('$[*]', 'X')}", '["X","X","X"]'),
    # jsonPathAdd appends to arrays; a missing path changes nothing; a non-array gives the empty string.
    ("${json:jsonPathAdd('$.nicknames', 'Jimmy'):jsonPath('$.nicknames')}", "Jimmy"),
    ("${json:jsonPathAdd('$.nicknames', 'Jimmy'):jsonPathAdd('$.nicknames', 'Jim'):jsonPath('$.nicknames')}",
     '["Jimmy","Jim"]'),
    ("${jsonArray:jsonPathAdd('$', 'Audi')}", '["Ford","BMW","Fiat","Audi"]'),
    ("${jsonObj:jsonPathAdd('$.missing-path', 'Jimmy')}", '{"name":"John","age":30,"car":null}'),
    ("${json:jsonPathAdd('$.firstName', 'Jimmy')}", ""),
    # jsonPathPut(path, key, value) sets a key in objects.
    ("${json:jsonPathPut('$','middlename','Turon'):jsonPath('$.middlename')}", "Turon"),
    ("${json:jsonPathPut('$.address','country','US'):jsonPath('$.address.country')}", "US"),
    ("${json:jsonPathPut('$.phoneNumbers[1]', 'backup', '212-555-1212'):jsonPath('$.phoneNumbers[1].backup')}",
     "212-555-1212"),
    ("${json:jsonPathPut('$','firstName','Jimmy'):jsonPath('$.firstName')}", "Jimmy"),
    ("${jsonObj:jsonPathPut('$', 'n', 2)}", '{"name":"John","age":30,"car":null,"n":2}'),
    ("${jsonObj:jsonPathPut('$.missing', 'n', 2)}", ""),
    ("${jsonArray:jsonPathPut('$', 'n', 2)}", ""),
    ("${jsonObj:jsonPathPut('$', '', 2)}", ""),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_function_results(text, expected):
    assert evaluate(text, ATTRS) == expected


def test_an_update_rewrites_the_document_as_compact_json():
    updated = evaluate("${json:jsonPathSet('$.firstName', 'James')}", ATTRS)
    expected = json.loads(ADDRESS_BOOK)
    expected["firstName"] = "James"
    assert updated == json.dumps(expected, separators=(",", ":"))


@pytest.mark.parametrize("text, message", [
    ("${json:jsonPath('$..')}", "Invalid JSON Path expression: $.."),
    ("${json:jsonPathDelete('$[')}", "Invalid JSON Path expression: $["),
    ("${json:jsonPath(${missing})}", "Invalid JSON Path expression: "),
    ("${missing:jsonPath('$.firstName')}", "Subject is empty"),
    ("${empty:jsonPathSet('$.a', 1)}", "Subject is empty"),
    ("${notJson:jsonPath('$.firstName')}", "Subject contains invalid JSON: [}"),
    ("${nullAttr:jsonPathAdd('$.a', ${now()})}", "a Date cannot be written into JSON"),
])
def test_bad_subjects_and_paths_fail_with_nifis_message(text, message):
    with pytest.raises(ExpressionError) as caught:
        evaluate(text, ATTRS)
    assert message in str(caught.value)


def test_argument_counts_are_checked_at_compile_time():
    for text in ("${json:jsonPath()}", "${json:jsonPathSet('$.a')}", "${json:jsonPathPut('$', 'k')}",
                 "${json:isJson(1)}", "${json:jsonPathDelete('$.a', 1)}"):
        with pytest.raises(ExpressionError, match="takes"):
            evaluate(text, ATTRS)


@pytest.mark.parametrize("value, text", [
    (6.1, "6.1"), (100.0, "100.0"), (1e7, "1.0E7"), (1.5e-5, "1.5E-5"), (0.001, "0.001"), (-2.5e12, "-2.5E12"),
    (123456.789, "123456.789"), (0.0, "0.0"),
])
def test_doubles_print_as_java_prints_them(value, text):
    assert java_double(value) == text


def test_to_json_keeps_non_ascii_and_escapes_controls():
    document = {"a": "é\n\"\\\x1f/", "b": [1, 2.0, None, True]}
    assert to_json(document) == '{"a":"é\\n\\"\\\\\\u001F/","b":[1,2.0,null,true]}'


@pytest.mark.parametrize("text, position, fragment", [
    ("${a:jsonPath('$.[')}", 13, "argument 1 of 'jsonPath': Invalid JSON Path expression: $.["),
    ("${a:jsonPathDelete('$..')}", 19, "argument 1 of 'jsonPathDelete': Invalid JSON Path expression: $.."),
    ("${a:jsonPathSet('', 1)}", 16, "argument 1 of 'jsonPathSet': Invalid JSON Path expression: "),
    ("${a:jsonPathAdd('$[?(@.b in)]', 1)}", 16, "the in operator needs a path or a value on each side"),
    ("x ${a:jsonPathPut('$.[', 'k', 1)}", 18, "argument 1 of 'jsonPathPut': Invalid JSON Path expression"),
    ("${a:replaceByPattern('abc')}", 21, "argument 1 of 'replaceByPattern': mapping rule 'abc' is not of the form"),
])
def test_a_literal_invalid_path_or_rule_is_refused_when_compiled(text, position, fragment):
    # Compiling alone fails, before any FlowFile is seen, at the argument's position.
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert fragment in caught.value.message
    assert caught.value.position == position


def test_a_literal_valid_path_compiles_once_and_evaluates():
    compiled = compile_expression("${json:jsonPath('$.address.city')}/${json:jsonPathDelete('$.phoneNumbers')}")
    assert compiled.evaluate(ATTRS).startswith("New York/{")
    assert compile_expression("${a:replaceByPattern('a.c:xyz')}").evaluate({"a": "abc"}) == "xyz"


def test_a_path_from_an_expression_is_still_checked_when_evaluated():
    compiled = compile_expression("${json:jsonPath(${path})}")
    assert compiled.evaluate({**ATTRS, "path": "$.age"}) == "25"
    with pytest.raises(ExpressionError, match=r"jsonPath: Invalid JSON Path expression: \$\.\["):
        compiled.evaluate({**ATTRS, "path": "$.["})
    # As in NiFi, the subject is checked before a path that comes from an expression.
    with pytest.raises(ExpressionError, match="Subject is empty"):
        compiled.evaluate({"path": "$.["})
    rules = compile_expression("${a:replaceByPattern(${rules})}")
    assert rules.evaluate({"a": "abc", "rules": "a.c:xyz"}) == "xyz"
    with pytest.raises(ExpressionError, match="mapping rule 'abc' is not of the form"):
        rules.evaluate({"a": "abc", "rules": "abc"})
