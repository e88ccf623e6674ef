"""A tool's argument schema: whether it can be used (``schema_problem``), and the check of a call's arguments
against it (``ArgumentsCheck``), before any tool is asked.

Reason to change: how a tool's arguments are checked (the validator, the rules added to a schema, the bound on
what a check may cost, the words a refusal uses).

The schema is JSON Schema of the draft its ``$schema`` names (Draft 2020-12 when it names none, or one
``jsonschema`` does not know), checked by ``jsonschema``. A schema may be used (``schema_problem`` is ``None``)
when it is valid against its draft's metaschema, and when a check of it costs a bounded time whatever the
arguments and whoever wrote the schema (the operator's tools file, or an MCP server's listing):

- it nests at most ``MAX_SCHEMA_DEPTH`` (32) levels deep;
- every ``$ref`` and ``$dynamicRef`` points inside the schema (``#...``): nothing is fetched, ever;
- ``$schema`` is named at the top only (a subschema cannot switch to a validator without these bounds);
- no ``patternProperties``: ``jsonschema`` matches those with Python's backtracking ``re`` on the model's keys;
- every ``pattern`` is one ``agent.config.tool_patterns`` accepts (it compiles for the Rust ``regex`` crate, which
  never backtracks, and it is small once its counted repetitions are unrolled), and that engine, not ``re``,
  checks it: no pattern takes exponential time, nor long on the strings a check may match.

Unknown keys are refused. A schema that sets none of ``additionalProperties``, ``unevaluatedProperties`` and
``patternProperties`` at its top is checked as if it set ``additionalProperties: false``, or, when it declares
keys through ``allOf``, ``$ref`` and the like (Draft 2019-09 and later), ``unevaluatedProperties: false``, which
counts them; a schema that sets one of the three is checked as written. The model is offered the schema as written.
``format`` is not asserted (an annotation, as Draft 2020-12 has it by default).

Cost: each keyword a check evaluates costs 1 (a reference followed, ``REFERENCE_COST``), plus the length of its
value when it is a list or an object, plus, for a keyword that walks the arguments (``items``,
``additionalProperties``, ``enum``, ``pattern``...), the length of the list, object or string it walks; a check
is refused past ``MAX_COST`` (a flat schema of 20 keys costs about 60; a list of 1,000 objects of 3 keys, about
9,000). Within it, the costliest schemas found took about 40 ms on one core of the development machine; the
``ToolBox`` checks in a worker thread. ``uniqueItems`` is checked in linear time.

A refusal (``problem``) says where and what in words of the schema, never the arguments' values (they may hold
what the caller said): ``$.city: must be of type string``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable

from agent.config.tool_patterns import compiled, matches

MAX_COST = 10_000
"""What one check may cost (see the module's docstring); past it, the call is refused."""
REFERENCE_COST = 20
"""What following a ``$ref`` costs: looking it up takes about as long as 20 simple keywords."""
MAX_SCHEMA_DEPTH = 32
"""Objects and arrays nest at most this deep in a schema (as a client's tools in ``session.start``)."""
MAX_PROBLEM_CHARS = 300
_REFERENCES = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
_WALKS_INSTANCE = frozenset(
    {"items", "prefixItems", "additionalItems", "contains", "uniqueItems", "additionalProperties"}
    | {"unevaluatedProperties", "unevaluatedItems", "propertyNames", "enum", "const", "pattern"}
)
"""Keywords whose work grows with the part of the arguments they look at (a list's items, an object's keys)."""
_CLOSERS = ("additionalProperties", "unevaluatedProperties", "patternProperties")
_COMPOSERS = ("allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "$recursiveRef", "if", "dependentSchemas")
"""Keywords through which a schema may declare keys besides its own ``properties``."""
_DATA = frozenset({"enum", "const", "default", "examples"})
"""Keywords whose value is data, not a schema: not searched for schema keywords."""
_NAMES = frozenset({"properties", "$defs", "definitions", "dependentSchemas", "dependencies"})
"""Keywords whose value maps names (not keywords) to schemas."""
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")

Keyword = Callable[[Validator, Any, Any, dict[str, Any]], Iterator[ValidationError] | None]


class _TooCostly(Exception):
    """A check went past ``MAX_COST``."""


class _Budget:
    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_COST


_extend: Callable[..., type[Validator]] = extend
"""``jsonschema.validators.extend``, typed (its stubs leave it untyped)."""
_BUDGET: ContextVar[_Budget | None] = ContextVar("tool_schema_budget", default=None)


def _size(value: object) -> int:
    return len(value) if isinstance(value, list | dict) else 0


def _walked(instance: object) -> int:
    return len(instance) if isinstance(instance, list | dict | str) else 0


def _counted(keyword: Keyword, base_cost: int, walks_instance: bool) -> Keyword:
    def counted(validator: Validator, value: Any, instance: Any, schema: dict[str, Any]) -> Any:
        budget = _BUDGET.get()
        if budget is not None:
            budget.left -= base_cost + _size(value) + (_walked(instance) if walks_instance else 0)
            if budget.left < 0:
                raise _TooCostly
        return keyword(validator, value, instance, schema)

    return counted


def _pattern(validator: Validator, pattern: Any, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not matches(pattern, instance):
        yield ValidationError("does not match the schema's pattern")


def _canonical(value: object) -> object:
    """``value`` in a form where JSON-equal values are equal and hashable (``1`` and ``1.0``, not ``true``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return ("list", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _canonical(v)) for k, v in value.items())))
    if isinstance(value, bool):
        return ("bool", value)
    return value


def _unique(validator: Validator, unique: Any, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    if unique and validator.is_type(instance, "array") and len({_canonical(i) for i in instance}) < len(instance):
        yield ValidationError("has repeated items")


@functools.cache
def _bounded(base: type[Validator]) -> type[Validator]:
    """``base`` with every keyword counted, ``pattern`` checked in linear time and ``uniqueItems`` in linear
    time."""
    keywords: dict[str, Keyword] = dict(base.VALIDATORS)
    if "pattern" in keywords:
        keywords["pattern"] = _pattern
    if "uniqueItems" in keywords:
        keywords["uniqueItems"] = _unique
    costs = {name: REFERENCE_COST if name in _REFERENCES else 1 for name in keywords}
    counted = {name: _counted(keyword, costs[name], name in _WALKS_INSTANCE) for name, keyword in keywords.items()}
    return _extend(base, counted)


def _walk(schema: object, top: bool = True) -> str | None:
    """The first thing in ``schema`` that would make a check unbounded or reach outside it, else ``None``."""
    if isinstance(schema, list):
        return next((p for item in schema if (p := _walk(item, top=False)) is not None), None)
    if not isinstance(schema, dict):
        return None
    for key, value in schema.items():
        problem = None
        if key == "patternProperties":
            problem = "patternProperties is not supported (its patterns would run on the model's keys unbounded)"
        elif key == "$schema" and not top:
            problem = "$schema may be named at the top of the schema only"
        elif key in ("$ref", "$dynamicRef") and isinstance(value, str) and not value.startswith("#"):
            problem = f"{key} points outside the schema ({value[:60]!r}); nothing is fetched"
        elif key == "pattern" and isinstance(value, str):
            try:
                compiled(value)
            except ValueError as exc:
                problem = str(exc)
        elif key in _NAMES and isinstance(value, dict):
            problem = next((p for v in value.values() if (p := _walk(v, top=False)) is not None), None)
        elif key not in _DATA:
            problem = _walk(value, top=False)
        if problem is not None:
            return problem
    return None


def _deeper(value: object, levels: int) -> bool:
    """``value`` nests objects and arrays more than ``levels`` deep (looked at without recursion)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= levels:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _draft(schema: Mapping[str, Any]) -> type[Validator]:
    return validator_for(schema, default=Draft202012Validator)


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` cannot be a tool's argument schema (see the module's docstring), or ``None``."""
    if _deeper(schema, MAX_SCHEMA_DEPTH):
        return f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
    draft = _draft(schema)
    try:
        draft.check_schema(dict(schema))
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "the top"
        return f"not a valid JSON Schema ({draft.__name__.removesuffix('Validator')}) at {where}: {exc.message[:120]}"
    return _walk(schema)


def _closed(schema: Mapping[str, Any], draft: type[Validator]) -> dict[str, Any]:
    """``schema`` refusing the keys it does not declare, unless it says itself what other keys may be."""
    closed = dict(schema)
    if not any(key in schema for key in _CLOSERS):
        composed = any(key in schema for key in _COMPOSERS) and "unevaluatedProperties" in draft.VALIDATORS
        closed["unevaluatedProperties" if composed else "additionalProperties"] = False
    return closed


def _name(key: object) -> str:
    text = str(key)
    return text if _PLAIN_NAME.fullmatch(text) else repr(text[:40])


def _where(path: Sequence[str | int]) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{_name(part)}" for part in path)


def _names(names: Sequence[object]) -> str:
    shown = ", ".join(_name(n) for n in names[:5])
    return shown + (", ..." if len(names) > 5 else "")


def _what(error: ValidationError) -> str:
    """What ``error`` says, in words of the schema (never a value of the arguments)."""
    keyword, value, instance = error.validator, error.validator_value, error.instance
    if not isinstance(keyword, str):  # a false schema
        return "nothing is allowed here"
    if keyword == "type":
        types = value if isinstance(value, list) else [value]
        return "must be of type " + " or ".join(str(t) for t in types)
    if keyword == "required" and isinstance(value, list) and isinstance(instance, dict):
        return "a required key is missing: " + _names([n for n in value if n not in instance])
    if keyword == "additionalProperties" and isinstance(instance, dict) and isinstance(error.schema, dict):
        declared = error.schema.get("properties", {})
        extra = [key for key in instance if key not in declared]
        return "keys the schema does not declare are not allowed" + (f": {_names(extra)}" if extra else "")
    if keyword == "unevaluatedProperties":  # which keys: what allOf, $ref... declared is the validator's to know
        return "keys the schema does not declare are not allowed"
    if keyword in ("pattern", "uniqueItems"):
        return error.message
    messages = {
        "enum": "must be one of the values the schema lists",
        "const": "must be the value the schema sets",
        "anyOf": "matches none of the schema's alternatives",
        "oneOf": "must match exactly one of the schema's alternatives",
        "not": "matches what the schema excludes",
    }
    if keyword in messages:
        return messages[keyword]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"breaks the schema's {keyword} {value:g}"
    return f"breaks the schema's {keyword} rule"


class ArgumentsCheck:
    """The check of a call's arguments against one tool's schema. ``ArgumentsCheck(schema)`` raises
    ``ValueError`` (saying why) for a schema ``schema_problem`` refuses."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        problem = schema_problem(schema)
        if problem is not None:
            raise ValueError(problem)
        draft = _draft(schema)
        # A registry of its own: jsonschema's default one fetches a URI it does not hold (deprecated, but on).
        self._validator = _bounded(draft)(_closed(schema, draft), registry=Registry())

    @classmethod
    def of_json(cls, parameters: str) -> ArgumentsCheck:
        """The check of a ``ToolSpec``'s ``parameters`` (JSON text); raises ``ValueError``."""
        try:
            schema = json.loads(parameters)
        except ValueError:
            raise ValueError("the schema is not JSON") from None
        if not isinstance(schema, dict):
            raise ValueError("the schema is not a JSON object")
        return cls(schema)

    def problem(self, arguments: Mapping[str, object]) -> str | None:
        """Where and how ``arguments`` break the schema (``$.city: must be of type string``), or ``None`` when
        they keep to it. Never raises for any arguments."""
        token = _BUDGET.set(_Budget())
        try:
            instance: Any = dict(arguments)
            error = best_match(self._validator.iter_errors(instance))
        except _TooCostly:
            return "$: the arguments cost too much to check against the schema"
        except RecursionError:
            return "$: the arguments cannot be checked: the schema or the arguments nest too deeply"
        except Unresolvable:  # jsonschema raises its own subclass
            return "$: the schema refers to something it does not hold"
        finally:
            _BUDGET.reset(token)
        if error is None:
            return None
        return f"{_where(error.absolute_path)}: {_what(error)}"[:MAX_PROBLEM_CHARS]
