"""The regular expressions of a tool's schema (``pattern``): which ones a schema may use, and the match of a
string against one, in a time bounded whatever the pattern and the string.

Reason to change: which patterns are accepted, or the engine that runs them.

Patterns run on the Rust ``regex`` crate (through ``pydantic-core``, ``regex_engine="rust-regex"``), which never
backtracks: ``^(a+)+$`` cannot take exponential time; look-around and backreferences do not compile, and are
refused. Its time is linear in the string but grows with the size of the compiled pattern, which counted
repetition multiplies (``(?:[\\s\\S]{0,100}){0,90}x`` took 0.3 s on 1,000 characters), so a pattern is refused
when it is longer than ``MAX_PATTERN_CHARS``, or when its size with every counted repetition unrolled is over
``MAX_PATTERN_SIZE`` (``unrolled_size``: a literal counts 1, a class, ``.`` or an escape ``CLASS_WEIGHT``, a
Unicode class or a word boundary ``UNICODE_WEIGHT``; ``{m,n}`` multiplies what it repeats by ``n``, ``{m,}`` by
``m + 1``; ``*``, ``+`` and ``?`` add nothing). Real patterns (``^[A-Z]{2}$``, a UUID, ``^\\+?[1-9]\\d{1,14}$``,
``^.{1,255}$``, ``^\\p{L}[\\p{L} '-]{0,63}$``) are within it; at it, a match of 10,000 characters took at most
about 40 ms on one core of the development machine. The caller bounds the strings matched (``tool_schema``
charges a match its string's length, and a check at most 10,000).
"""

from __future__ import annotations

import functools
import re

from pydantic_core import SchemaError, SchemaValidator, core_schema

MAX_PATTERN_CHARS = 512
MAX_PATTERN_SIZE = 4_096
CLASS_WEIGHT = 8
"""What a class (``[a-z]``, ``.``, ``\\s``) costs beside a literal."""
UNICODE_WEIGHT = 64
"""What a Unicode class (``\\p{L}``, ``\\w``, ``\\d``, a class holding one) or a word boundary costs: they compile
to many states, and a word boundary makes the engine leave its fast path."""
_UNICODE_ESCAPES = frozenset("pPwWdDbB")
_COUNTED = re.compile(r"\{(\d{1,9})(,(\d{0,9}))?\}")


def _class_end(pattern: str, start: int) -> int:
    """The index after the class opening at ``start`` (``[``), nested classes and escapes included."""
    i, depth = start + 1, 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):  # a first ``]`` is a literal
        i += 1
    while i < len(pattern) and depth:
        if pattern[i] == "\\":
            i += 1
        elif pattern[i] == "[":
            depth += 1
        elif pattern[i] == "]":
            depth -= 1
        i += 1
    return i


def _escape_end(pattern: str, start: int) -> int:
    """The index after the escape at ``start`` (``\\``): ``\\p{L}``, ``\\x{41}`` and ``\\u{41}`` with their braces."""
    i = start + 2
    if pattern[start + 1 : start + 2] in ("p", "P", "x", "u") and pattern.startswith("{", i):
        close = pattern.find("}", i)
        return len(pattern) if close < 0 else close + 1
    return i


def _group_start(pattern: str, start: int) -> int:
    """The index where the group opening at ``start`` (``(``) begins its contents: after ``(``, ``(?:``,
    ``(?i:``, ``(?P<name>`` or ``(?<name>``; after the ``)`` of flags alone (``(?i)``)."""
    if not pattern.startswith("?", start + 1):
        return start + 1
    if pattern.startswith(("?P<", "?<"), start + 1):
        close = pattern.find(">", start)
        return len(pattern) if close < 0 else close + 1
    ends = [end for end in (pattern.find(":", start), pattern.find(")", start)) if end >= 0]
    return min(ends) + 1 if ends else len(pattern)


def unrolled_size(pattern: str) -> int:
    """The size of ``pattern`` with its counted repetitions unrolled (see the module's docstring)."""
    levels: list[list[int]] = [[]]
    i = 0
    while i < len(pattern):
        char, size = pattern[i], None
        if char == "\\":
            end = _escape_end(pattern, i)
            size = UNICODE_WEIGHT if pattern[i + 1 : i + 2] in _UNICODE_ESCAPES else CLASS_WEIGHT
            i = end
        elif char == "[":
            end = _class_end(pattern, i)
            unicode = any(f"\\{e}" in pattern[i:end] for e in _UNICODE_ESCAPES)
            i, size = end, UNICODE_WEIGHT if unicode else CLASS_WEIGHT
        elif char == "(":
            i = _group_start(pattern, i)
            if pattern[i - 1] != ")":  # not a group of flags alone, (?i)
                levels.append([])
            continue
        elif char == ")" and len(levels) > 1:
            i, size = i + 1, sum(levels.pop())
        elif char == "{" and (counted := _COUNTED.match(pattern, i)) is not None:
            low, comma, high = counted.groups()
            times = int(low) + 1 if comma and not high else int(high or low)
            if levels[-1]:
                levels[-1][-1] *= max(times, 1)
            i = counted.end()
            continue
        elif char in "*+?|^$":
            i += 1
            continue
        else:
            i, size = i + 1, CLASS_WEIGHT if char == "." else 1
        levels[-1].append(size)
    return sum(sum(level) for level in levels)


@functools.lru_cache(maxsize=256)
def compiled(pattern: str) -> SchemaValidator:
    """``pattern`` compiled by the Rust ``regex`` crate; raises ``ValueError`` saying why it is refused."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"the pattern is longer than {MAX_PATTERN_CHARS} characters")
    if unrolled_size(pattern) > MAX_PATTERN_SIZE:
        raise ValueError(f"the pattern {pattern[:60]!r} repeats too much to be checked quickly")
    try:
        return SchemaValidator(
            core_schema.str_schema(pattern=pattern), core_schema.CoreConfig(regex_engine="rust-regex")
        )
    except SchemaError:
        raise ValueError(
            f"the pattern {pattern[:60]!r} does not compile for a linear-time engine (look-around, backreference, "
            "or too large)"
        ) from None


def matches(pattern: str, text: str) -> bool:
    """Whether ``pattern`` (one ``compiled`` accepts) matches somewhere in ``text``."""
    return compiled(pattern).isinstance_python(text)
