"""Claims: a paper's statement, its figure, and a *rule* that decides from measured metrics.

A rule is a small expression over metric keys, evaluated safely (no ``eval``)::

    rollout_error.fput.rohnn.h10 < rollout_error.fput.ae_node.h10
    max_of("energy_drift.*.rohnn") <= 0.05 and latent_dim.fput < 16
    speedup.n512 >= 0.5 * speedup_paper

Grammar: numbers; metric keys written as dotted names (``a.b.c``) or, for keys that are not
Python identifiers, ``m("key-with-dashes")``; ``+ - * / **``; comparisons (chains allowed);
``and``/``or``/``not``; functions ``abs``, ``min``, ``max``, ``log10`` and glob aggregates
``max_of``, ``min_of``, ``mean_of``, ``count_of`` over keys matching a pattern (``fnmatch``).

``holds`` is always computed here from the numbers: ``True``/``False``, or ``None`` when the
rule cannot be decided (a metric is missing or not finite), with the reason in ``note``.

**Placebos.** A comparative claim (the default ``kind``) names its placebo: the substitution
that removes the method's contribution. Either a mapping of key parts, method to baseline
(``placebo={"decor": "monolithic"}``: every metric key with a part ``decor`` takes the value of
the same key with ``monolithic`` there; parts may be ``fnmatch`` patterns such as
``"blitzrank_*"``; the part swapped may also be a dataset or task, e.g.
``{"sim_pl": "sim_persist100"}`` for an option's gain that must vanish on an oracle where it
cannot help), or the name of a data-level null the package runs in its tests
(``placebo="null_world"``; ``icml26.shared.testing.check_paper`` takes that run's metrics).
A rule that still holds under its placebo measures nothing: it is a test, not a claim. An
``absolute`` claim (a threshold, no baseline) states its ``floor`` instead: the value a
method with no effect would reach, and why the threshold is not forced.
"""

from __future__ import annotations

import ast
import fnmatch
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CLAIM_KINDS",
    "Claim",
    "RuleError",
    "RuleKeys",
    "check_rule",
    "evaluate_rule",
    "placebo_metrics",
    "rule_keys",
]

#: ``comparative``: the method against a baseline (needs a placebo); ``absolute``: a threshold
#: with no baseline (needs a floor).
CLAIM_KINDS = ("comparative", "absolute")

Number = float | int


class RuleError(ValueError):
    """A rule that does not parse or uses something outside the grammar."""


class _Undecidable(Exception):
    """A metric the rule needs is missing or not finite."""


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_SCALAR_FUNCS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "min": min,
    "max": max,
    "log10": math.log10,
}
_AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "max_of": max,
    "min_of": min,
    "mean_of": lambda xs: sum(xs) / len(xs),
    "count_of": lambda xs: float(len(xs)),
}


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` as a string, or None when the node is not a plain dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Evaluator:
    def __init__(self, metrics: Mapping[str, Any] | None) -> None:
        self.metrics = metrics
        self.used: dict[str, float | None] = {}

    def metric(self, key: str) -> float:
        if self.metrics is None:  # syntax check only
            return 1.0
        if key not in self.metrics:
            self.used[key] = None
            raise _Undecidable(f"metric {key!r} is missing")
        value = self.metrics[key]
        if value is None or isinstance(value, bool) or not isinstance(value, int | float):
            self.used[key] = None
            raise _Undecidable(f"metric {key!r} is not a number ({value!r})")
        if not math.isfinite(value):
            self.used[key] = None
            raise _Undecidable(f"metric {key!r} is not finite ({value!r})")
        self.used[key] = float(value)
        return float(value)

    def aggregate(self, name: str, pattern: str) -> float:
        if self.metrics is None:
            return 1.0
        keys = sorted(k for k in self.metrics if fnmatch.fnmatchcase(k, pattern))
        if not keys:
            raise _Undecidable(f"no metric matches {pattern!r}")
        return _AGGREGATES[name]([self.metric(k) for k in keys])

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return self.eval(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            if isinstance(node.value, bool):
                raise RuleError("booleans are not allowed as constants")
            return node.value
        name = _dotted(node) if isinstance(node, ast.Name | ast.Attribute) else None
        if name is not None:
            return self.metric(name)
        if isinstance(node, ast.Compare):
            left = self.eval(node.left)
            for op, comparator in zip(node.ops, node.comparators, strict=True):
                fn = _COMPARE.get(type(op))
                if fn is None:
                    raise RuleError(f"comparison {type(op).__name__} is not allowed")
                right = self.eval(comparator)
                if not fn(left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            values = [self.eval(v) for v in node.values]  # evaluate all: record every metric
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand)
            if isinstance(node.op, ast.Not):
                return not operand
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.UAdd):
                return +operand
            raise RuleError(f"unary operator {type(node.op).__name__} is not allowed")
        if isinstance(node, ast.BinOp):
            fn = _BINARY.get(type(node.op))
            if fn is None:
                raise RuleError(f"operator {type(node.op).__name__} is not allowed")
            left, right = self.eval(node.left), self.eval(node.right)
            try:
                return fn(left, right)
            except ZeroDivisionError as exc:
                raise _Undecidable("division by zero") from exc
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            fname = node.func.id
            if fname == "m" or fname in _AGGREGATES:
                if len(node.args) != 1 or not (
                    isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                ):
                    raise RuleError(f"{fname}() takes one string argument")
                key = node.args[0].value
                return self.metric(key) if fname == "m" else self.aggregate(fname, key)
            if fname in _SCALAR_FUNCS:
                args = [self.eval(a) for a in node.args]
                try:
                    return _SCALAR_FUNCS[fname](*args)
                except (ValueError, TypeError) as exc:
                    raise _Undecidable(f"{fname}{tuple(args)}: {exc}") from exc
            raise RuleError(f"function {fname!r} is not allowed")
        raise RuleError(f"{ast.dump(node)[:60]} is not allowed in a rule")


def _parse(rule: str) -> ast.Expression:
    if not isinstance(rule, str) or not rule.strip():
        raise RuleError("a rule must be a non-empty string")
    try:
        return ast.parse(rule.strip(), mode="eval")
    except SyntaxError as exc:
        raise RuleError(f"rule {rule!r} does not parse: {exc.msg}") from exc


@dataclass(frozen=True)
class RuleKeys:
    """The metric names a rule reads: exact ``keys`` and glob ``patterns`` of aggregates."""

    keys: frozenset[str]
    patterns: frozenset[str]


def rule_keys(rule: str) -> RuleKeys:
    """Every metric key and aggregate pattern that ``rule`` names, read from its syntax tree.

    Unlike :func:`evaluate_rule`, this sees the keys of every branch (``a or b`` names both),
    so a misspelt key can be found without metrics that happen to reach it.

    Args:
        rule: an expression over metric keys.

    Returns:
        The metric keys and the aggregate patterns (``mean("acc.*")``) the rule names.

    Raises:
        RuleError: the rule is outside the grammar.
    """
    tree = _parse(rule)
    check_rule(rule)
    keys: set[str] = set()
    patterns: set[str] = set()

    def visit(node: ast.AST) -> None:
        name = _dotted(node) if isinstance(node, ast.Name | ast.Attribute) else None
        if name is not None:
            keys.add(name)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            arg = node.args[0] if node.args else None
            if node.func.id in ("m", *_AGGREGATES) and isinstance(arg, ast.Constant):
                (keys if node.func.id == "m" else patterns).add(str(arg.value))
                return
            for a in node.args:  # a scalar function: its name is not a metric
                visit(a)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return RuleKeys(frozenset(keys), frozenset(patterns))


def check_rule(rule: str) -> None:
    """Raise :class:`RuleError` if ``rule`` is outside the grammar (no metrics needed)."""
    _Evaluator(None).eval(_parse(rule))


def evaluate_rule(
    rule: str, metrics: Mapping[str, Any]
) -> tuple[bool | None, dict[str, float | None], str]:
    """Evaluate ``rule`` on ``metrics``.

    Args:
        rule: an expression over metric keys (the grammar of :class:`Claim`).
        metrics: flat metrics (dotted keys).

    Returns:
        ``(holds, measured, note)``: ``holds`` is ``None`` when undecidable; ``measured`` maps
        every metric key the rule read to its value; ``note`` explains an undecidable rule.
    """
    tree = _parse(rule)
    ev = _Evaluator(metrics)
    try:
        holds = bool(ev.eval(tree))
        note = ""
    except _Undecidable as exc:
        holds, note = None, str(exc)
    return holds, ev.used, note


def placebo_metrics(
    metrics: Mapping[str, Any], substitution: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """``metrics`` with the method's figures replaced by the baseline's.

    Every key with a dot-separated part matching a pattern of ``substitution`` (``fnmatch``)
    takes the value of the key with that part replaced by the baseline's name.

    Args:
        metrics: flat metrics (dotted keys).
        substitution: method part (or pattern) -> baseline part.

    Returns:
        ``(placebo, unmatched)``: the substituted metrics, in which a key whose baseline
        counterpart is absent is left out (a rule reading it is then undecided), and
        ``unmatched`` mapping each such key to the counterpart it looked for.
    """
    placebo: dict[str, Any] = {}
    unmatched: dict[str, str] = {}
    for key, value in metrics.items():
        parts = key.split(".")
        swapped = [
            next((base for pat, base in substitution.items() if fnmatch.fnmatchcase(p, pat)), p)
            for p in parts
        ]
        if swapped == parts:
            placebo[key] = value
            continue
        counterpart = ".".join(swapped)
        if counterpart in metrics:
            placebo[key] = metrics[counterpart]
        else:
            unmatched[key] = counterpart
    return placebo, unmatched


@dataclass(frozen=True)
class Claim:
    """A claim of the paper, checked against our measurements.

    Attributes:
        id: short stable identifier (``"long_horizon_accuracy"``).
        statement: the paper's claim in words.
        paper_value: the paper's figure or qualitative result, as text.
        rule: an expression over metric keys (see the module docstring) deciding whether the
            claim holds in our run.
        profiles: the profiles whose runs produce the rule's metrics, when not every profile
            does (e.g. ``("quick", "full")`` for a comparison ``smoke`` is too small to make).
            Empty means every profile. In a run of another profile the claim is reported
            undecided with a note saying so, and ``icml26.shared.testing.check_paper`` does not
            ask the run for its keys.
        kind: ``"comparative"`` (default: needs a ``placebo``) or ``"absolute"`` (needs a
            ``floor``).
        placebo: for a comparative claim, a mapping ``{method part: baseline part}`` (see
            :func:`placebo_metrics`) or the name of a data-level null run by the package's
            tests (see the module docstring).
        floor: for an absolute claim, the figure a method with no effect reaches and why the
            threshold is not forced by construction.
        decidable_when: an optional rule (same grammar) saying when a run can decide the
            claim at all, e.g. ``"power_by_axis.train > 0.5"``: where it is false the claim is
            reported undecided, with a note naming the condition and its figures, whatever
            ``rule`` says (a run too small or too noisy to decide is not a failure).
            ``check_paper`` accepts that undecided outcome; it still asks for the keys.
    """

    id: str
    statement: str
    paper_value: str
    rule: str
    profiles: tuple[str, ...] = ()
    kind: str = "comparative"
    placebo: Mapping[str, str] | str | None = None
    floor: str = ""
    decidable_when: str = ""

    def __post_init__(self) -> None:
        if not self.id or not self.id.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"claim id must be a short identifier, got {self.id!r}")
        check_rule(self.rule)
        if self.decidable_when:
            check_rule(self.decidable_when)
        if isinstance(self.profiles, str) or not all(
            isinstance(p, str) and p for p in self.profiles
        ):
            raise ValueError(
                f"claim {self.id!r}: profiles must be a tuple of profile names, got {self.profiles!r}"
            )
        object.__setattr__(self, "profiles", tuple(self.profiles))
        if self.kind not in CLAIM_KINDS:
            raise ValueError(
                f"claim {self.id!r}: kind must be one of {CLAIM_KINDS}, got {self.kind!r}"
            )
        placebo = self.placebo
        if isinstance(placebo, str):
            if not placebo.strip():
                raise ValueError(f"claim {self.id!r}: a named placebo must be non-empty")
        elif placebo is not None:
            if (
                not isinstance(placebo, Mapping)
                or not placebo
                or not all(
                    isinstance(k, str) and k and isinstance(v, str) and v and "." not in k + v
                    for k, v in placebo.items()
                )
            ):
                raise ValueError(
                    f"claim {self.id!r}: placebo must map key parts to key parts "
                    f"(e.g. {{'decor': 'monolithic'}}), got {placebo!r}"
                )
            object.__setattr__(self, "placebo", dict(placebo))
        if self.kind == "absolute" and placebo is not None:
            raise ValueError(f"claim {self.id!r}: an absolute claim has a floor, not a placebo")

    def under_placebo(self, metrics: Mapping[str, Any]) -> tuple[bool | None, str]:
        """Evaluate the rule with the method's figures replaced by the baseline's.

        Args:
            metrics: the run's flat metrics.

        Returns:
            ``(holds, note)``: ``holds`` is ``None`` when the claim has no key-part placebo or
            the substituted rule cannot be decided (``note`` says why).
        """
        if not isinstance(self.placebo, Mapping):
            return None, "no key-part placebo"
        placebo, unmatched = placebo_metrics(metrics, self.placebo)
        holds, used, note = evaluate_rule(self.rule, placebo)
        missing = sorted(k for k in used if k in unmatched)
        if missing:
            note = "; ".join(f"no baseline figure {unmatched[k]!r} for {k!r}" for k in missing)
        return holds, note

    def applies_to(self, profile: str) -> bool:
        """Whether runs of ``profile`` produce this claim's metrics."""
        return not self.profiles or profile in self.profiles

    def evaluate(self, metrics: Mapping[str, Any], profile: str | None = None) -> dict[str, Any]:
        """The claim as a results.json entry, with ``holds`` computed from ``metrics``.

        With ``profile`` given and outside :attr:`profiles`, whatever the metrics say, the
        note records that this profile does not produce the claim's figures. A claim whose
        rule holds and still holds with its key-part placebo substituted is undecided: the
        run cannot tell the method from the baseline (``placebo_holds`` is ``True``).

        Args:
            metrics: the run's flat metrics.
            profile: the run's profile, or None.

        Returns:
            The entry: id, statement, paper value, measured values, rule, ``holds``
            (True / False / None), note, kind, and the placebo's outcome or the floor.
        """
        holds, measured, note = evaluate_rule(self.rule, metrics)
        if profile is not None and not self.applies_to(profile) and holds is None:
            note = f"only the {', '.join(self.profiles)} profile(s) produce this claim's figures"
        elif self.decidable_when:
            decidable, guard_measured, guard_note = evaluate_rule(self.decidable_when, metrics)
            measured = {**measured, **guard_measured}
            if decidable is not True:
                why = "is false" if decidable is False else f"cannot be evaluated ({guard_note})"
                holds, note = None, f"not decidable on this run: {self.decidable_when} {why}"
        entry: dict[str, Any] = {
            "id": self.id,
            "statement": self.statement,
            "paper_value": self.paper_value,
            "measured": measured,
            "rule": self.rule,
            "holds": holds,
        }
        if note:
            entry["note"] = note
        entry["kind"] = self.kind
        if self.decidable_when:
            entry["decidable_when"] = self.decidable_when
        if self.kind == "absolute":
            entry["floor"] = self.floor
        elif self.placebo is not None:
            entry["placebo"] = self.placebo
            if isinstance(self.placebo, Mapping) and holds is not None:
                entry["placebo_holds"], _ = self.under_placebo(metrics)
                if holds and entry["placebo_holds"]:
                    # The baseline's figures in the method's place meet the rule too: this
                    # run cannot tell the method from its placebo, so it is no evidence.
                    entry["holds"] = None
                    entry["note"] = (
                        f"also holds under its placebo {self.placebo}: this run cannot tell "
                        "the method from the baseline"
                    )
        return entry
