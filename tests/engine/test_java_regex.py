"""Java regular expressions keep java.util.regex.Pattern's meaning (its javadoc is the specification)."""

import re

import pytest

from engine.java_regex import UNICODE_CASE, UNICODE_CHARACTER_CLASS, UNIX_LINES, java_regex, to_python_pattern


def full(pattern: str, text: str, flags: int = 0) -> bool:
    return java_regex(pattern, flags).fullmatch(text) is not None


@pytest.mark.parametrize("pattern, yes, no", [
    # POSIX classes: US-ASCII only.
    (r"\p{Lower}", "a", "é"), (r"\p{Upper}", "Z", "É"), (r"\p{ASCII}", "\x7f", "\x80"),
    (r"\p{Alpha}", "q", "ß"), (r"\p{Digit}", "7", "٣"), (r"\p{Alnum}", "7", "_"),
    (r"\p{Punct}", "~", "§"), (r"\p{Graph}", "!", " "), (r"\p{Print}", " ", "\x7f"),
    (r"\p{Blank}", "\t", "\n"), (r"\p{Cntrl}", "\x7f", "a"), (r"\p{XDigit}", "F", "g"),
    (r"\p{Space}", "\x0b", "\xa0"),
    # java.lang.Character classes.
    (r"\p{javaLowerCase}", "é", "É"), (r"\p{javaUpperCase}", "É", "é"),
    (r"\p{javaWhitespace}", "\x1c", "\xa0"), (r"\p{javaWhitespace}", "\u2003", "\u202f"),
    (r"\p{javaMirrored}", "(", "a"), (r"\p{javaDigit}", "٣", "a"), (r"\p{javaLetterOrDigit}", "ж", "-"),
    (r"\p{javaSpaceChar}", "\xa0", "\t"), (r"\p{javaISOControl}", "\x85", "a"),
    # Scripts, blocks, categories, binary properties.
    (r"\p{IsLatin}", "é", "α"), (r"\p{script=Greek}", "α", "a"), (r"\p{sc=Cyrillic}", "ж", "a"),
    (r"\p{InGreek}", "α", "a"), (r"\p{block=Basic Latin}", "a", "é"), (r"\p{blk=Cyrillic}", "ж", "α"),
    (r"\p{IsInherited}", "\u0951", "a"), (r"\p{IsDevanagari}", "क", "\u0951"),  # Script, not Script_Extensions
    (r"\p{InBasicLatin}", "a", "é"), (r"\p{L}", "ж", "1"), (r"\p{Lu}", "Ж", "ж"), (r"\pL", "x", "1"),
    (r"\p{IsL}", "x", "1"), (r"\p{IsLu}", "X", "x"), (r"\p{general_category=Lu}", "X", "x"),
    (r"\p{gc=Nd}", "٣", "x"), (r"\p{IsAlphabetic}", "ж", "1"), (r"\p{IsWhite_Space}", "\u2028", "x"),
    (r"\p{IsWhiteSpace}", "\u3000", "x"), (r"\p{IsHexDigit}", "f", "g"), (r"\p{IsIdeographic}", "東", "a"),
    (r"\p{IsPunctuation}", "§", "a"), (r"\p{Sc}", "€", "e"), (r"\p{LD}", "٣", "_"), (r"\p{L1}", "ÿ", "Ā"),
    (r"\p{all}", "\U0001f600", ""),
    # Negations, inside and outside classes.
    (r"\P{L}", "1", "a"), (r"[^\p{L}]", "1", "a"), (r"[\P{L}]", "1", "a"), (r"[\p{L}\d]", "1", "-"),
    (r"[\p{IsGreek}&&\p{Ll}]", "α", "Α"), (r"[\p{Alpha}&&[^a-f]]", "g", "c"),
])
def test_character_families(pattern, yes, no):
    assert full(pattern, yes), f"{pattern} should match {yes!r}"
    assert not full(pattern, no), f"{pattern} should not match {no!r}"


def test_posix_classes_follow_unicode_with_unicode_character_class():
    assert full(r"\p{Lower}+", "éa", UNICODE_CHARACTER_CLASS)
    assert full(r"(?U)\p{Alpha}\p{Digit}\p{Punct}", "ж٣§")
    assert full(r"(?U)\w+", "café") and not full(r"\w+", "café")
    assert full(r"(?U)\d", "٣") and not full(r"\d", "٣")
    assert full(r"(?U)\s", "\u2003") and not full(r"\s", "\u2003")


@pytest.mark.parametrize("pattern, yes, no", [
    (r"[a-z&&[def]]", "e", "a"), (r"[a-z&&[^bc]]", "a", "b"), (r"[a-z&&[^m-p]]", "z", "n"),
    (r"[a-d[m-p]]", "n", "e"), (r"[^a-z&&[^aeiou]]", "e", "b"), (r"[\w&&[^\d]]", "_", "5"),
    (r"[a-z&&def]", "d", "a"),
])
def test_class_union_and_intersection(pattern, yes, no):
    assert full(pattern, yes) and not full(pattern, no)


def test_quoting():
    assert full(r"\Q.*[\E", ".*[") and not full(r"\Q.*\E", "ab")
    assert full(r"a\Q+", "a+")  # \Q without \E quotes to the end
    assert full(r"[\Q]-\E]+", "]-]") and not full(r"[\Q]-\E]", "a")


def test_horizontal_and_vertical_whitespace_and_linebreak():
    for char in " \t\xa0\u1680\u180e\u2000\u200a\u202f\u205f\u3000":
        assert full(r"\h", char) and not full(r"\H", char)
    for char in "\n\x0b\f\r\x85\u2028\u2029":
        assert full(r"\v", char) and not full(r"\V", char)
    assert full(r"\R", "\r\n") and full(r"\R", "\u2028") and not full(r"\R", "\t")
    assert java_regex(r"\R").findall("a\r\nb\nc") == ["\r\n", "\n"]
    assert not full(r"\R\n", "\r\n")  # \R takes \r\n as one, atomically


def test_grapheme_cluster():
    assert java_regex(r"\X").findall("e\u0301x") == ["e\u0301", "x"]


def test_end_anchors():
    assert java_regex(r"a\z").search("a\n") is None
    assert java_regex(r"a\Z").search("a\n") and java_regex(r"a\Z").search("a\r\n")
    assert java_regex(r"a\Z").search("a\n\n") is None
    assert java_regex(r"a$").search("a\u2028") and java_regex(r"a$").search("a\r\n")
    assert java_regex(r"(?d)a$").search("a\r") is None and java_regex(r"(?d)a$").search("a\n")


def test_line_terminators():
    assert not full(".", "\r") and not full(".", "\x85") and not full(".", "\u2028")
    assert full("(?d).", "\r") and not full("(?d).", "\n") and full(".", "\r", UNIX_LINES)
    assert full("(?s).", "\n") and full(".", "\n", re.DOTALL)
    assert java_regex("(?m)^b").findall("a\rb\r\nb") == ["b", "b"]
    assert java_regex("(?m)^").findall("a\n") == [""]  # not after the final line terminator
    assert java_regex("(?m)a$").findall("a\r\na\u2029a") == ["a", "a", "a"]
    assert java_regex("^a", re.MULTILINE).findall("a\na") == ["a", "a"]


def test_case_folding_is_ascii_unless_unicode_case():
    assert full("(?i)abc", "AbC") and not full("(?i)é", "É")
    assert full("(?iu)é", "É") and full("é", "É", re.IGNORECASE | UNICODE_CASE)
    assert full("(?iU)é", "É")
    assert not full("(?i)straße", "STRASSE")  # simple case folding, as Java
    assert full("a(?i)b", "aB") and not full("a(?i)b", "AB")
    assert full("(?i:a)b", "Ab") and not full("(?i:a)b", "AB")
    assert full("(?i)a(?-i)b", "Ab") and not full("(?i)a(?-i)b", "AB")
    assert full("((?i)a)b", "Ab") and not full("((?i)a)b", "AB")  # a flag ends with its group


def test_comments_mode():
    assert full("(?x) a b  # letters\n c", "abc")
    assert full("(?x)[a b]+", "ab") and not full("(?x)[a b]", " ")  # whitespace is ignored in classes too
    assert full("a b", "ab", re.VERBOSE)
    assert full(r"(?x)a\ b", "a b")


@pytest.mark.parametrize("pattern, text", [
    (r"\0101", "A"), (r"\011", "\t"), (r"\0377", "\xff"), (r"\x41", "A"), (r"\x{1F600}", "\U0001f600"),
    (r"\u00e9", "é"), (r"\uD83D\uDE00", "\U0001f600"), (r"\cA", "\x01"), (r"\c[", "\x1b"), (r"\e", "\x1b"),
    (r"\a", "\a"), (r"\N{LATIN SMALL LETTER E WITH ACUTE}", "é"), (r"[\x{41}-\x{43}]+", "ABC"),
    (r"\t\n\r\f", "\t\n\r\f"), (r"\\", "\\"), (r"\.", "."),
])
def test_escapes(pattern, text):
    assert full(pattern, text)


def test_groups_and_references():
    assert java_regex(r"(?<year>\d{4})-(?<month>\d\d)").match("2024-05").group("month") == "05"
    assert full(r"(?<w>\w)\k<w>", "aa") and not full(r"(?<w>\w)\k<w>", "ab")
    assert full(r"(a)\1", "aa")
    assert full(r"(a)\11", "aa1")  # group 11 does not exist: \1 followed by '1'
    assert java_regex(r"\2(a)").search("aa") is None  # a group the pattern lacks never matches
    assert full(r"(a)(?:x|\1)", "aa")
    assert full(r"(?>a+)b", "aab") and not full(r"(?>a+)ab", "aab")
    assert full(r"a++b", "aab") and not full(r"a++ab", "aab")
    assert full(r"(?<=a)b", "b") is False and java_regex(r"(?<=a)b").search("ab")


def test_quantifiers_and_literals():
    assert full(r"a{2,3}", "aaa") and not full(r"a{2}", "aaa")
    assert full(r"a{2,}?", "aaaa")
    assert full(r"[]a]+", "]a")
    assert full(r"[a-]+", "a-") and full(r"[-a]+", "-a")
    assert full(r"a|b(?:c|d)", "bd")
    assert full(r"[.*+?]+", ".*+?")


@pytest.mark.parametrize("pattern", [
    r"\p{Nope}", r"\p{IsNope}", r"\p{InNope}", r"\p{script=Nope}", r"(", r")", r"[a", r"[z-a]", r"a{,2}",
    r"{1}", r"\y", r"(?<n>a)\k<m>", r"(?q)", r"\x{110000}", r"\0", r"\u12", r"[\A]", r"\p{Lu",
])
def test_invalid_patterns_are_value_errors_naming_them(pattern):
    with pytest.raises(ValueError) as error:
        java_regex(pattern)
    assert repr(pattern) in str(error.value)


def test_an_unknown_family_is_named():
    for name in ("IsNope", "InNope", "script=Nope", "Nope"):
        with pytest.raises(ValueError, match=f"unknown character property name {{{name}}}"):
            java_regex(rf"\p{{{name}}}")


def test_flags_passed_by_callers():
    assert full("ABC", "abc", re.IGNORECASE)
    assert java_regex("^b$", re.MULTILINE).search("a\nb\nc")
    assert java_regex("(?-m)^b$", re.MULTILINE).search("a\nb\nc") is None
    assert java_regex("^a", re.ASCII).match("a")  # ASCII is Java's default and accepted


def test_the_compiled_pattern_has_the_re_api():
    pattern = java_regex(r"(?<k>\p{L}+)=(\d+)")
    assert pattern.groups == 2 and pattern.groupindex == {"k": 1}
    assert pattern.sub(r"\g<2>:\g<k>", "ж=1, b=2") == "1:ж, 2:b"
    assert [m.group(1) for m in pattern.finditer("a=1 b=2")] == ["a", "b"]
    assert pattern.split("x a=1 y") == ["x ", "a", "1", " y"]


def test_to_python_pattern_gives_a_regex_module_pattern():
    import regex

    translated = to_python_pattern(r"\p{IsGreek}+")
    assert regex.compile(translated, regex.V1).fullmatch("αβ")
    with pytest.raises(ValueError):
        to_python_pattern("[")


def test_case_folding_in_classes_is_ascii_unless_unicode_case():
    assert full("(?i)[a-c]+", "aBC") and full("(?i)[^a]", "b") and not full("(?i)[^a]", "A")
    assert not full("(?i)[é]", "É") and full("(?iu)[é]", "É")
    assert full("(?i)[^é]", "É") and not full("(?iu)[^é]", "É")
    assert full(r"(?i)[\Qab\E]+", "AB") and full("(?i)[x-z&&[^y]]", "Z") and not full("(?i)[x-z&&[^y]]", "Y")
    assert full(r"(?i)\p{Lu}", "a")  # Java: with CASE_INSENSITIVE, Lu stands for every cased letter


def test_word_boundary_agrees_with_word_class():
    assert java_regex(r"\bfoo\b").search("a foo.") and not java_regex(r"\bfoo\b").search("afoo")
    assert java_regex(r"\b\w+\b").findall("café au lait") == ["caf", "au", "lait"]
    assert java_regex(r"(?U)\b\w+\b").findall("café au lait") == ["café", "au", "lait"]
    assert java_regex(r"\Bo").findall("oo o") == ["o"]
