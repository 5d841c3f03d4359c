"""Dataclasses to JSON and back, by their annotations (the probe results' generic conversion).

``to_jsonable`` turns dataclasses into dicts, tuples into lists and enums into their values;
``from_jsonable(cls, data)`` builds ``cls`` back, converting nested fields by their type hints:
missing keys take their defaults, unknown keys are ignored, a wrong type raises TypeError.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, TypeVar

T = TypeVar("T")


def to_jsonable(value: Any) -> Any:
    """Dataclasses to dicts, tuples to lists, enums to their values (recursively)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    return value


def from_jsonable(cls: type[T], data: Mapping[str, Any]) -> T:
    """Build dataclass ``cls`` from a JSON dict, converting nested fields by their annotations."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name])
    return cls(**kwargs)


def _convert(hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        last_error: Exception | None = None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(arg, value)
            except (TypeError, ValueError) as error:
                last_error = error
        raise TypeError(f"cannot read {value!r} as {hint}") from last_error
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise TypeError(f"expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], item) for item in value)
        return tuple(_convert(arg, item) for arg, item in zip(args, value, strict=False))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected an object, got {value!r}")
        return {str(key): _convert(args[1], item) for key, item in value.items()}
    if hint is Any:
        return value
    if isinstance(hint, type):
        if dataclasses.is_dataclass(hint):
            return from_jsonable(hint, value)
        if issubclass(hint, StrEnum):
            return hint(value)
        if hint is float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"expected a number, got {value!r}")
            return float(value)
        if hint is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"expected an integer, got {value!r}")
            return value
        if hint is str:
            if not isinstance(value, str):
                raise TypeError(f"expected a string, got {value!r}")
            return value
        if hint is bool:
            if not isinstance(value, bool):
                raise TypeError(f"expected true/false, got {value!r}")
            return value
    if hint is type(None):
        if value is not None:
            raise TypeError(f"expected null, got {value!r}")
        return None
    return value
