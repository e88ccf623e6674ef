"""A tool's argument schema (``agent.config.tool_schema``): which schemas can be used, how arguments are checked
against them (unknown keys refused unless allowed, words of the schema and never the arguments' values in a
refusal), and that no schema or arguments can make a check unbounded (patterns in linear time, a bounded cost,
a bounded depth). Pure: no loop, no clock."""

from __future__ import annotations

from typing import Any

import pytest

from agent.config.tool_schema import MAX_SCHEMA_DEPTH, ArgumentsCheck, schema_problem

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"],
}


def problem(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    return ArgumentsCheck(schema).problem(arguments)


def test_arguments_that_keep_to_the_schema_pass() -> None:
    assert problem(WEATHER, {"city": "Paris"}) is None
    assert problem(WEATHER, {"city": "Paris", "days": 3}) is None


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"city": 4111111111111111}, "$.city: must be of type string"),
        ({}, "$: a required key is missing: city"),
        ({"city": "Paris", "days": 0}, "$.days: breaks the schema's minimum 1"),
        (
            {"city": "Paris", "admin": True, "debug": 1},
            "$: keys the schema does not declare are not allowed: admin, debug",
        ),
    ],
)
def test_a_refusal_says_where_and_what_in_words_of_the_schema(arguments: dict[str, Any], expected: str) -> None:
    assert problem(WEATHER, arguments) == expected


def test_a_refusal_never_shows_a_value_of_the_arguments() -> None:
    schema = {"type": "object", "properties": {"card": {"type": "string", "pattern": "^[0-9]{4}$"}}}
    assert problem(schema, {"card": "4111-1111 secret"}) == "$.card: does not match the schema's pattern"
    enum = {"type": "object", "properties": {"plan": {"enum": ["basic", "pro"]}}}
    assert problem(enum, {"plan": "secret-plan"}) == "$.plan: must be one of the values the schema lists"
    weird_key = problem(WEATHER, {"city": "x", "a\nb": 1})
    assert weird_key is not None and "\n" not in weird_key and "'a\\nb'" in weird_key


def test_unknown_keys_pass_only_where_the_schema_allows_them() -> None:
    assert problem(WEATHER | {"additionalProperties": True}, {"city": "x", "extra": 1}) is None
    typed = WEATHER | {"additionalProperties": {"type": "string"}}
    assert problem(typed, {"city": "x", "extra": "y"}) is None
    assert problem(typed, {"city": "x", "extra": 1}) == "$.extra: must be of type string"
    composed = {"type": "object", "allOf": [{"properties": {"a": {}}}], "properties": {"b": {}}}
    assert problem(composed, {"a": 1, "b": 2}) is None  # allOf declares a: unevaluatedProperties counts it
    assert problem(composed, {"a": 1, "c": 3}) == "$: keys the schema does not declare are not allowed"
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"a": {}}}
    assert problem(draft7, {"b": 1}) == "$: keys the schema does not declare are not allowed: b"
    assert (
        problem({"type": "object", "properties": {}}, {"a": 1})
        == "$: keys the schema does not declare are not allowed: a"
    )


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "properties": {"a": {"type": "strin"}}}, "not a valid JSON Schema (Draft202012) at"),
        ({"type": "object", "patternProperties": {"^a": {}}}, "patternProperties is not supported"),
        ({"type": "object", "properties": {"a": {"$ref": "https://x.example/s.json"}}}, "$ref points outside"),
        ({"type": "object", "properties": {"a": {"$schema": "http://json-schema.org/draft-07/schema#"}}}, "at the top"),
        ({"type": "object", "properties": {"a": {"pattern": "(?=x)y"}}}, "does not compile for a linear-time engine"),
        ({"type": "object", "properties": {"a": {"pattern": "(a)\\1"}}}, "does not compile for a linear-time engine"),
    ],
)
def test_a_schema_that_cannot_be_checked_safely_is_refused(schema: dict[str, Any], expected: str) -> None:
    found = schema_problem(schema)
    assert found is not None and expected in found
    with pytest.raises(ValueError, match=r"\w"):
        ArgumentsCheck(schema)


def test_names_that_look_like_keywords_are_names() -> None:
    schema = {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "patternProperties": {"enum": [{"$ref": "x"}]}},
    }
    assert schema_problem(schema) is None


def test_a_schema_nesting_too_deep_is_refused_before_anything_recurses() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        deep = {"not": deep}
    assert schema_problem({"type": "object", "properties": {"a": deep}}) == (
        f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
    )


def test_a_pattern_runs_in_linear_time() -> None:
    # (a+)+$ takes exponential time in Python's re on this text; the linear engine answers at once.
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}
    assert problem(schema, {"a": "a" * 5000 + "!"}) == "$.a: does not match the schema's pattern"
    assert problem(schema, {"a": "aaa"}) is None


def test_a_check_costs_a_bounded_amount_whatever_the_schema() -> None:
    # Each level offers the next one twice: 2^40 paths to a leaf no argument matches.
    defs: dict[str, Any] = {
        f"l{i}": {"anyOf": [{"$ref": f"#/$defs/l{i + 1}"}, {"$ref": f"#/$defs/l{i + 1}"}]} for i in range(40)
    }
    defs["l40"] = {"type": "string"}
    schema = {"type": "object", "$defs": defs, "properties": {"a": {"$ref": "#/$defs/l0"}}}
    assert problem(schema, {"a": 1}) == "$: the arguments cost too much to check against the schema"
    loop = {"type": "object", "$defs": {"l": {"$ref": "#/$defs/l"}}, "properties": {"a": {"$ref": "#/$defs/l"}}}
    assert problem(loop, {"a": 1}) is not None


def test_unique_items_are_compared_as_json_values() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array", "uniqueItems": True}}}
    assert problem(schema, {"a": [{"x": 1}] * 3_000}) == "$.a: has repeated items"
    assert problem(schema, {"a": [1, 1.0]}) == "$.a: has repeated items"
    assert problem(schema, {"a": [1, True, {"x": [1]}, {"x": [True]}]}) is None
    assert problem(schema, {"a": [{"x": i} for i in range(2000)]}) is None
