"""The patterns a tool's schema may use (``agent.config.tool_patterns``): common ones pass, those that could not
be matched in linear time or that unroll too large are refused, and a match is a search, as JSON Schema's. Pure."""

from __future__ import annotations

import pytest

from agent.config.tool_patterns import MAX_PATTERN_SIZE, compiled, matches, unrolled_size


@pytest.mark.parametrize(
    "pattern",
    [
        r"^[A-Z]{2}$",
        r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        r"^\+?[1-9]\d{1,14}$",
        r"^.{1,255}$",
        r"^\p{L}[\p{L} '-]{0,63}$",
        r"^[\w.+-]+@[\w-]+\.[\w.-]+$",
        r"^(a+)+$",
    ],
)
def test_common_patterns_are_accepted(pattern: str) -> None:
    assert unrolled_size(pattern) <= MAX_PATTERN_SIZE
    compiled(pattern)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"(?=a)b", "does not compile for a linear-time engine"),
        (r"(a)\1", "does not compile for a linear-time engine"),
        (r"(?:[\s\S]{0,100}){0,90}x", "repeats too much"),
        (r"\p{L}{0,100}", "repeats too much"),
        (r"a{9999}", "repeats too much"),
        ("a" * 600, "longer than 512 characters"),
    ],
)
def test_patterns_that_could_take_long_are_refused(pattern: str, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        compiled(pattern)


def test_the_unrolled_size_multiplies_counted_repetition_only() -> None:
    assert unrolled_size("abc") == 3
    assert unrolled_size("a*b+c?") == 3
    assert unrolled_size("a{3}") == 3 and unrolled_size("a{2,5}") == 5 and unrolled_size("a{4,}") == 5
    assert unrolled_size("(?:ab){10}") == unrolled_size("(ab){10}") == unrolled_size("(?P<x>ab){10}") == 20
    assert unrolled_size("(?i)(?i:ab){3}((a){2}b){2}") == 6 + 6
    assert unrolled_size("[a-z]{10}") == 80 and unrolled_size(r"\d{10}") == 640
    assert unrolled_size(r"[{]\{x{2}") == 8 + 8 + 2  # braces in a class or escaped are no repetition


def test_a_match_is_a_search_and_runs_in_linear_time() -> None:
    assert matches("b", "abc") and not matches("^b", "abc")
    assert not matches("^(a+)+$", "a" * 50_000 + "!")  # exponential for a backtracking engine
