"""The package's one JSON reader: what it refuses from outside, and how it says where."""

from __future__ import annotations

import pytest

from user_questions._reading.json_reader import MAX_JSON_DEPTH, JSONRefused, load_json
from user_questions._reading.text import text_problem
from user_questions.errors import UserQuestionError


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_a_document_as_deep_as_the_limit_is_read_and_one_level_more_is_refused() -> None:
    assert load_json(nested(MAX_JSON_DEPTH)) is not None
    with pytest.raises(JSONRefused, match=f"^nested deeper than {MAX_JSON_DEPTH} levels$"):
        load_json(nested(MAX_JSON_DEPTH + 1))
    objects = '{"a":' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(JSONRefused, match="nested deeper"):
        load_json(objects)


def test_nesting_deep_enough_to_exhaust_the_parser_is_refused_not_a_recursion_error() -> None:
    with pytest.raises(JSONRefused, match="nested deeper"):
        load_json(nested(100_000))


def test_brackets_inside_strings_are_text_not_nesting() -> None:
    assert load_json('["' + "[" * 10_000 + '"]') == ["[" * 10_000]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"questions": [{"id": "\\ud800"}]}',
            'property "questions[0].id" holds a lone surrogate (U+D800), which is not text',
        ),
        (
            '{"a": {"\\udfff": 1}}',
            'a property name in property "a" holds a lone surrogate (U+DFFF), which is not text',
        ),
        ('"\\udc00 alone"', "the document holds a lone surrogate (U+DC00), which is not text"),
        (
            '["fine", "\\ud83d\\ude00", "\\ude00\\ud83d"]',
            'property "[2]" holds a lone surrogate (U+DE00), which is not text',
        ),
    ],
)
def test_a_lone_surrogate_is_refused_naming_where_it_is(text: str, message: str) -> None:
    with pytest.raises(JSONRefused) as refused:
        load_json(text)
    assert str(refused.value) == message
    assert refused.value.document is not None  # read, so a protocol can answer by rpcId


def test_a_surrogate_pair_is_one_character_and_is_kept() -> None:
    assert load_json('"\\ud83d\\ude00"') == "😀"


def test_bytes_must_be_utf_8_and_encoded_surrogates_are_not() -> None:
    assert load_json('{"é": "ü"}'.encode()) == {"é": "ü"}
    with pytest.raises(JSONRefused, match=r"^not valid JSON \(not UTF-8: "):
        load_json(b'"\xed\xa0\x80"')  # U+D800 as UTF-8 would spell it
    with pytest.raises(JSONRefused, match="not UTF-8"):
        load_json(b'"\xff"')


def test_a_byte_order_mark_before_the_document_is_refused_by_name() -> None:
    # As `json.loads` refused it, with a message that says what it is.
    for document in ('\ufeff{"type": "ping"}', '\ufeff{"type": "ping"}'.encode()):
        with pytest.raises(JSONRefused, match=r"^not valid JSON \(it begins with a byte order"):
            load_json(document)
    assert load_json('{"text": "\ufeff"}') == {"text": "\ufeff"}  # inside a string it is text


def test_text_that_holds_a_lone_surrogate_itself_is_refused() -> None:
    with pytest.raises(JSONRefused, match=r"the document holds a lone surrogate \(U\+D801\)"):
        load_json('"\ud801"')


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinities_are_not_json(constant: str) -> None:
    with pytest.raises(JSONRefused, match=f"not valid JSON \\({constant} is not a JSON value\\)"):
        load_json(f'{{"x": {constant}}}')


def test_an_integer_of_more_than_4300_digits_is_refused() -> None:
    with pytest.raises(JSONRefused, match=r"^not valid JSON \(Exceeds the limit \(4300 digits\)"):
        load_json("1" * 5_000)


def test_a_key_given_twice_counts_once_with_its_last_value() -> None:
    assert load_json('{"type": "ask", "type": "ping"}') == {"type": "ping"}


def test_a_nul_is_text_to_the_reader_and_a_problem_to_the_rules_of_text() -> None:
    assert load_json('"a\\u0000b"') == "a\x00b"
    assert text_problem("a\x00b") == "holds a NUL character (U+0000)"
    assert text_problem("a\udbffb") == "holds a lone surrogate (U+DBFF), which is not text"
    assert text_problem("plain ünïcode 😀") is None


def test_an_error_quoting_a_lone_surrogate_can_still_be_sent() -> None:
    error = UserQuestionError('question id "\ud800" appears more than once', "BAD_QUESTION")
    assert error.message == 'question id "\\ud800" appears more than once'
    assert str(error).encode("utf-8")
    assert UserQuestionError("plain ünïcode 😀", "BAD_QUESTION").message == "plain ünïcode 😀"
