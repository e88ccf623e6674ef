"""Settings that configure the session core: each says once, where it is declared, which core field it sets.

``core(EndpointPolicy, "hangover_min_ms", ge=60, description=...)`` is a pydantic ``Field`` that records its
target (a ``CoreField``, kept as the field's ``json_schema_extra``, so the JSON schema shows ``"core":
"EndpointPolicy.hangover_min_ms"``) and whose default is the core dataclass field's own: one default. A setting
whose default differs from the core's (the core's is what a policy built bare does, as the unit tests build
them) gives its own, in the same declaration; so does a setting whose type is not the core's, with its
``convert`` (``"smart-turn" | "off"`` → ``bool``, a list → a tuple).

``build(EndpointPolicy, settings, speculative_ms=...)`` makes a policy from every setting that targets it, and
takes by name only what the settings cannot know (the call's, the wire's, a value computed from several
settings); a field both set and given is refused, so each value has one path. A core field with no setting and
no reason, or a setting with no core field, fails ``tests/unit/test_policy_fields.py``.

Reason to change: how settings reach the core. It names no policy: the targets are named where the settings
are declared.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, Field
from pydantic.config import JsonDict

P = TypeVar("P")

_UNSET: Any = object()


@dataclasses.dataclass(frozen=True, slots=True)
class CoreField:
    """A setting's target: field ``name`` of the core dataclass ``policy``, set to ``convert(setting)``."""

    policy: type[Any]
    name: str
    convert: Callable[[Any], Any] | None = None

    def __call__(self, schema: JsonDict) -> None:
        """Pydantic's ``json_schema_extra`` hook: the setting's JSON schema names its target."""
        schema["core"] = f"{self.policy.__name__}.{self.name}"

    def value(self, setting: Any) -> Any:
        return setting if self.convert is None else self.convert(setting)


def core(
    policy: type[Any],
    name: str,
    default: Any = _UNSET,
    *,
    default_factory: Callable[[], Any] | None = None,
    convert: Callable[[Any], Any] | None = None,
    **field: Any,
) -> Any:
    """A settings field that sets ``policy.name``: a pydantic ``Field`` (``field``: its constraints and
    description) whose default is ``default`` (or ``default_factory``'s), else the core field's own. Raises
    ``TypeError`` for a field ``policy`` lacks, or one without a default when the setting gives none."""
    fields = {f.name: f for f in dataclasses.fields(policy)}
    if name not in fields:
        raise TypeError(f"{policy.__name__} has no field {name!r}")
    target = CoreField(policy, name, convert)
    if default_factory is not None:
        return Field(default_factory=default_factory, json_schema_extra=target, **field)
    if default is _UNSET:
        own = fields[name]
        if own.default is dataclasses.MISSING:
            raise TypeError(f"{policy.__name__}.{name} has no default of its own: the setting must give one")
        default = own.default
    return Field(default, json_schema_extra=target, **field)


@functools.cache
def declared(settings: type[BaseModel]) -> dict[str, CoreField]:
    """Every setting of ``settings`` and of its sections that sets a core field, by its dotted path
    (``"turn.hangover_min_ms"``)."""
    found: dict[str, CoreField] = {}
    for name, info in settings.model_fields.items():
        if isinstance(info.json_schema_extra, CoreField):
            found[name] = info.json_schema_extra
        elif isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            found.update({f"{name}.{path}": target for path, target in declared(info.annotation).items()})
    return found


def _read(settings: BaseModel, path: str) -> Any:
    return functools.reduce(getattr, path.split("."), settings)


def build(policy: Callable[..., P], settings: BaseModel, /, **given: Any) -> P:
    """``policy`` from every setting of ``settings`` that targets one of its fields, and ``given``: what the
    settings cannot say (fields neither set nor given keep the core's defaults). Raises ``TypeError`` for a field
    both set by a setting and given."""
    values = {
        target.name: target.value(_read(settings, path))
        for path, target in declared(type(settings)).items()
        if target.policy is policy
    }
    twice = sorted(values.keys() & given.keys())
    if twice:
        raise TypeError(f"{getattr(policy, '__name__', policy)}: {twice} are set by settings: give them there")
    return policy(**values, **given)
