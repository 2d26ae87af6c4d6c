"""Metric keys: dotted names built one way, with one encoding for numbers.

A metric key is parts joined by dots, ``ndcg10.sim_iid.blitzrank_k10.0p25``. A text part is
letters, digits, ``_`` and ``-`` (no dots: a dot separates parts). A number part is written
by :func:`number_part` and read back by :func:`parse_number_part`:

=============  ============  =============================================================
value          part          rule
=============  ============  =============================================================
``25``         ``25``        an int: its digits
``0.25``       ``0p25``      a float: its shortest round-trip ``repr``, ``.`` -> ``p``
``2.0``        ``2``         a float equal to an int (and ``repr``-ed without exponent)
                             drops the ``.0``: ``2`` and ``2.0`` give the same key
``-0.5``       ``m0p5``      a minus sign -> ``m`` (``-0.0`` is written ``0``)
``1e-05``      ``1em5``      ``repr``'s exponent form (``|x| < 1e-4`` or ``>= 1e16``):
                             ``e``, the exponent's sign ``m`` for minus, nothing for
                             plus, no leading zeros: ``1.5e+20 -> 1p5e20``,
                             ``1e+16 -> 1e16`` (so the float ``1e16`` and the int
                             ``10**16``, written in digits, give different parts)
=============  ============  =============================================================

NumPy scalars are encoded by their own shortest form (``np.float32(0.1) -> 0p1``). NaN,
infinities and booleans are refused.

:func:`metric_key` joins parts and encodes the numbers among them::

    metric_key("ndcg10", "sim_iid", "blitzrank_k10", 0.25)  # "ndcg10.sim_iid.blitzrank_k10.0p25"
    metric_key("fd", "t" + number_part(0.25))  # "fd.t0p25"

Keys in claim rules (:mod:`icml26.shared.claims`): a rule reads a bare dotted name as a
Python attribute chain, so a key can be written bare only when every part is a Python
identifier that is not a keyword (:func:`is_rule_name`): ``fd.t0p25`` can, but
``ndcg10.sim_iid.blitzrank_k10.0p25`` (a part starting with a digit) and ``acc.sim-iid`` (a
dash) cannot, and are written ``m("ndcg10.sim_iid.blitzrank_k10.0p25")``. :func:`rule_ref`
gives the right spelling for a key. To keep keys bare in rules, prefix number parts with a
letter naming the quantity (``t0p25``, ``k10``, ``a0p1``).
"""

from __future__ import annotations

import keyword
import math
import re

import numpy as np

__all__ = ["is_rule_name", "metric_key", "number_part", "parse_number_part", "rule_ref"]

Number = int | float | np.integer | np.floating
"""What :func:`number_part` encodes: a Python or NumPy int or float (not a bool)."""

_TEXT_PART = re.compile(r"[A-Za-z0-9_\-]+")
_REPR = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?(?:e([+-])([0-9]+))?")
_ENCODED = re.compile(r"(m?)([0-9]+)(?:p([0-9]+))?(?:e(m?)([0-9]+))?")


def _plain_decimal(value: Number) -> str:
    """The shortest round-trip text of a finite number, as ``repr`` writes it."""
    if isinstance(value, int | np.integer):
        return str(int(value))
    if value == 0:
        return "0"  # -0.0 and 0.0 give one key
    return str(value) if isinstance(value, np.floating) else repr(float(value))


def number_part(value: Number) -> str:
    """A number as a metric-key part (see the module docstring for the encoding).

    Args:
        value: an int or a finite float (Python or NumPy scalar); not a bool.

    Returns:
        The part: ``25 -> "25"``, ``0.25 -> "0p25"``, ``2.0 -> "2"``, ``-0.5 -> "m0p5"``,
        ``1e-05 -> "1em5"``.

    Raises:
        ValueError: ``value`` is a bool, not a number, NaN or infinite.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, Number):
        raise ValueError(
            f"number_part takes an int or a float, got {value!r} ({type(value).__name__})"
        )
    if not math.isfinite(value):
        raise ValueError(f"a metric key cannot hold {value!r}: numbers in keys must be finite")
    text = _plain_decimal(value)
    match = _REPR.fullmatch(text)
    if match is None:  # pragma: no cover - repr and NumPy's str always match
        raise ValueError(f"cannot encode {value!r} (written {text!r}) as a key part")
    sign, whole, fraction, exp_sign, exponent = match.groups()
    part = ("m" if sign else "") + whole
    if fraction and fraction.strip("0"):
        part += "p" + fraction
    if exponent is not None:
        part += "e" + ("m" if exp_sign == "-" else "") + str(int(exponent))
    return part


def parse_number_part(text: str) -> int | float:
    """The number a :func:`number_part` part encodes, its exact inverse.

    Args:
        text: a part as :func:`number_part` writes it (``"25"``, ``"0p25"``, ``"m0p5"``,
            ``"1em5"``).

    Returns:
        An int for a part of digits only (``"25" -> 25``), else a float
        (``"0p25" -> 0.25``). ``parse_number_part(number_part(x)) == x`` for every finite
        ``x`` (a float equal to an int comes back as that int).

    Raises:
        ValueError: ``text`` is not a part :func:`number_part` writes (``"1p0"``, ``"007"``,
            ``"m0"``, ``"0.5"``, ...); the message gives the canonical spelling when there
            is one.
    """
    match = _ENCODED.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(
            f"{text!r} is not a number part: expected digits with optional 'p' for the "
            "point, a leading 'm' for minus and 'e' for an exponent (e.g. '0p25', 'm2', "
            f"'1em5'){_number_hint(text)}"
        )
    sign, whole, fraction, exp_sign, exponent = match.groups()
    decimal = ("-" if sign else "") + whole
    value: int | float
    if fraction is None and exponent is None:
        value = int(decimal)
    else:
        decimal += f".{fraction}" if fraction else ""
        decimal += f"e{'-' if exp_sign else ''}{exponent}" if exponent else ""
        value = float(decimal)
    if number_part(value) != text:
        raise ValueError(
            f"{text!r} is not how number_part writes {value!r}: use {number_part(value)!r}"
        )
    return value


def _number_hint(text: object) -> str:
    """``"; number_part(0.25) is '0p25'"`` when ``text`` reads as a finite number, else ``""``."""
    try:
        number = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    return f"; number_part({number!r}) is {number_part(number)!r}" if math.isfinite(number) else ""


def _part(part: object) -> str:
    if isinstance(part, str):
        return _text_part(part)
    if isinstance(part, bool | np.bool_) or not isinstance(part, Number):
        raise ValueError(
            f"metric key parts are text, ints or floats, got {part!r} ({type(part).__name__})"
        )
    return number_part(part)


def _text_part(part: str) -> str:
    if _TEXT_PART.fullmatch(part):
        return part
    hint = _number_hint(part) or "; for a number pass the number itself or use number_part()"
    raise ValueError(
        f"metric key part {part!r} is not allowed: a part is letters, digits, '_' and '-' "
        f"(no dots, no spaces, not empty){hint}"
    )


def metric_key(*parts: str | Number) -> str:
    """Join parts into a dotted metric key, encoding numbers with :func:`number_part`.

    Args:
        *parts: at least one; text parts match ``[A-Za-z0-9_-]+``, numbers are ints or
            finite floats.

    Returns:
        The key, e.g. ``metric_key("ndcg10", "sim_iid", "blitzrank_k10", 0.25) ==
        "ndcg10.sim_iid.blitzrank_k10.0p25"``.

    Raises:
        ValueError: no parts, a text part that is empty or holds a dot, a space or another
            character outside ``[A-Za-z0-9_-]`` (the message names it and suggests
            :func:`number_part` for numbers), a bool, a NaN or an infinity.
    """
    if not parts:
        raise ValueError("metric_key needs at least one part")
    return ".".join(_part(p) for p in parts)


def is_rule_name(key: str) -> bool:
    """Whether ``key`` can be written bare in a claim rule.

    Args:
        key: a metric key.

    Returns:
        ``True`` when every dot-separated part is a Python identifier and not a keyword
        (``fd.t0p25``); ``False`` otherwise (``acc.0p25``, ``acc.sim-iid``, ``x.if``): such
        a key is written ``m("...")`` in a rule.
    """
    return isinstance(key, str) and all(
        part.isidentifier() and not keyword.iskeyword(part) for part in key.split(".")
    )


def rule_ref(key: str) -> str:
    """How a claim rule names ``key``: bare when :func:`is_rule_name`, else ``m("key")``.

    Args:
        key: a metric key.

    Returns:
        ``"fd.t0p25"`` for ``"fd.t0p25"``; ``'m("acc.0p25")'`` for ``"acc.0p25"``.

    Raises:
        ValueError: ``key`` holds a double quote or a backslash (no rule can name it).
    """
    if is_rule_name(key):
        return key
    if '"' in key or "\\" in key:
        raise ValueError(f"metric key {key!r} cannot be named in a rule (quote or backslash)")
    return f'm("{key}")'
