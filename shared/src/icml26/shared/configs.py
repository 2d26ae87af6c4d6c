"""Frozen-dataclass configs: conversion to JSON and field-by-field overrides.

Overrides are the one way every paper's config is changed from the command line::

    icml26 run ro-hnn --profile quick --set epochs=200 --set systems=fput,wave --set model.width=64

Values are parsed by the field's type annotation: ``bool`` (true/false/1/0/yes/no), ``int``,
``float``, ``str``, ``Path``, ``Literal[...]``, ``X | None`` (``none``/``null``),
``tuple[X, ...]``/``list[X]`` (comma-separated or a JSON list) and nested dataclasses (dotted
keys). The dataclass's own ``__post_init__`` validation runs on the result.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["OverrideError", "apply_overrides", "config_fields", "config_to_dict"]


class OverrideError(ValueError):
    """An override that names no field, or whose value does not fit the field's type."""


def _to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _to_jsonable(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_to_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    return value


def config_to_dict(config: Any) -> dict[str, Any]:
    """A JSON-ready dict of a dataclass config (nested dataclasses become nested dicts).

    Args:
        config: a dataclass instance.

    Returns:
        Field name -> value, with nested dataclasses as dicts and paths and tuples made
        JSON-ready.

    Raises:
        TypeError: ``config`` is not a dataclass instance.
    """
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError(f"a config must be a dataclass instance, got {type(config).__name__}")
    result = _to_jsonable(config)
    assert isinstance(result, dict)
    return result


def config_fields(config: Any, prefix: str = "") -> list[tuple[str, str, Any]]:
    """``(dotted name, type, current value)`` for every leaf field, for help output."""
    rows: list[tuple[str, str, Any]] = []
    hints = typing.get_type_hints(type(config))
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        name = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            rows.extend(config_fields(value, f"{name}."))
        else:
            rows.append((name, _type_name(hints.get(f.name, Any)), _to_jsonable(value)))
    return rows


def _type_name(tp: Any) -> str:
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def _parse_value(text: str, tp: Any, field: str) -> Any:
    """Parse ``text`` (a CLI string, or an already-decoded JSON value) as type ``tp``."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return text
    if origin in (typing.Union, types.UnionType):
        if isinstance(text, str) and text.lower() in {"none", "null"} and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _parse_value(text, arg, field)
            except OverrideError as exc:
                errors.append(str(exc))
        raise OverrideError(f"{field}: {text!r} fits none of {_type_name(tp)}")
    if origin is typing.Literal:
        for choice in args:
            if str(choice) == str(text):
                return choice
        raise OverrideError(f"{field}: {text!r} is not one of {', '.join(map(str, args))}")
    if origin in (tuple, list) or tp in (tuple, list):
        items: Any = text
        if isinstance(text, str):
            stripped = text.strip()
            if stripped.startswith("["):
                try:
                    items = json.loads(stripped)
                except json.JSONDecodeError as exc:
                    raise OverrideError(f"{field}: {text!r} is not a JSON list") from exc
            else:
                items = [t.strip() for t in stripped.split(",")] if stripped else []
        if not isinstance(items, list):
            raise OverrideError(f"{field}: expected a list, got {text!r}")
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(items) != len(args):
                raise OverrideError(f"{field}: expected {len(args)} values, got {len(items)}")
            parsed = [_parse_value(v, a, field) for v, a in zip(items, args, strict=True)]
        else:
            elem = args[0] if args else Any
            parsed = [_parse_value(v, elem, field) for v in items]
        return tuple(parsed) if (origin is tuple or tp is tuple) else parsed
    if tp is bool:
        if isinstance(text, bool):
            return text
        if str(text).lower() in _TRUE:
            return True
        if str(text).lower() in _FALSE:
            return False
        raise OverrideError(f"{field}: {text!r} is not a boolean (true/false)")
    if tp is int:
        try:
            if isinstance(text, float) and not text.is_integer():
                raise ValueError
            return int(text) if not isinstance(text, str) else int(text.replace("_", ""))
        except (TypeError, ValueError) as exc:
            raise OverrideError(f"{field}: {text!r} is not an integer") from exc
    if tp is float:
        try:
            return float(text)
        except (TypeError, ValueError) as exc:
            raise OverrideError(f"{field}: {text!r} is not a number") from exc
    if tp is str:
        return str(text)
    if isinstance(tp, type) and issubclass(tp, Path):
        return Path(str(text))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for member in tp:
            if str(text) in (member.name, str(member.value)):
                return member
        raise OverrideError(f"{field}: {text!r} is not one of {', '.join(m.name for m in tp)}")
    raise OverrideError(f"{field}: fields of type {_type_name(tp)} cannot be set from the CLI")


def _collect(config: Any, path: list[str], raw: str, full: str, changes: dict[str, Any]) -> None:
    """Parse one override into ``changes`` (nested dicts for nested dataclasses)."""
    names = {f.name for f in dataclasses.fields(config)}
    head = path[0]
    if head not in names:
        raise OverrideError(
            f"unknown config field {full!r} for {type(config).__name__}; "
            f"fields are: {', '.join(sorted(names))}"
        )
    current = getattr(config, head)
    is_group = dataclasses.is_dataclass(current) and not isinstance(current, type)
    if len(path) > 1:
        if not is_group:
            raise OverrideError(f"{full!r}: field {head!r} has no sub-fields")
        _collect(current, path[1:], raw, full, changes.setdefault(head, {}))
    else:
        if is_group:
            raise OverrideError(f"{full!r} is a group of fields; set one of its sub-fields")
        tp = typing.get_type_hints(type(config))[head]
        changes[head] = _parse_value(raw, tp, full)


def _rebuild(config: Any, changes: dict[str, Any]) -> Any:
    values = {
        name: _rebuild(getattr(config, name), value) if isinstance(value, dict) else value
        for name, value in changes.items()
    }
    return dataclasses.replace(config, **values)


def apply_overrides(config: Any, overrides: Sequence[str]) -> Any:
    """Return ``config`` with the ``"dotted.field=value"`` overrides applied.

    Every value is parsed first (a later override of the same field wins); the config is then
    rebuilt once, so ``__post_init__`` checks that relate several fields see all overrides
    together, whatever their order on the command line.

    Args:
        config: a dataclass instance (frozen configs are rebuilt, never mutated).
        overrides: ``"field=value"`` or ``"nested.field=value"`` strings; each value is parsed
            for the field's annotated type.

    Returns:
        A new config with the overrides applied (``config`` itself when there are none).

    Raises:
        TypeError: ``config`` is not a dataclass instance.
        OverrideError: an override without ``=``, an unknown field, a value that does not
            parse for its field, or a rebuilt config that its ``__post_init__`` refuses.
    """
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError("overrides apply to a dataclass instance")
    changes: dict[str, Any] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise OverrideError(f"override {item!r} must look like field=value")
        _collect(config, key.split("."), raw.strip(), key, changes)
    if not changes:
        return config
    try:
        return _rebuild(config, changes)
    except (ValueError, TypeError) as exc:
        raise OverrideError(f"{' '.join(overrides)}: {exc}") from exc
