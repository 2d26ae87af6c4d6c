"""Running untrusted world programs safely: an ``ast`` whitelist, then a budgeted interpreter run.

A world program (written by a foundation model or a mutation operator) is Python *syntax* but
gets none of Python's power: :func:`check_source` parses it and rejects anything outside a
small whitelist (no imports, no attribute access except ``world.place``, no dunder or private
names, no lambdas, comprehensions, ``with``, ``try``, classes, ``global``), and oversized
programs. Arithmetic is rewritten into a guarded call that accepts numbers only and bounds
their size, so ``"a" * 10**9`` cannot exhaust memory. :func:`execute` then runs it with a handful of pure builtins, counting executed lines
(``max_lines``) and wall time (``max_seconds``) with a trace function, so an endless ``while``
loop or a huge ``range`` is stopped and reported instead of hanging the curriculum.
"""

from __future__ import annotations

import ast
import copy
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["MAX_NODES", "MAX_SOURCE_CHARS", "ProgramError", "check_source", "execute"]

MAX_SOURCE_CHARS = 6000
MAX_NODES = 800
MAX_RANGE = 256


class ProgramError(ValueError):
    """A world program was rejected.

    Args:
        reason: a short category for counting (``size``, ``syntax``, ``forbidden``, ``limit``,
            ``runtime``, ``invalid``).
        detail: what was wrong, for a person.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


_ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Module,
    ast.Assign,
    ast.AugAssign,
    ast.Expr,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Constant,
    ast.Dict,
    ast.List,
    ast.Tuple,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.If,
    ast.For,
    ast.While,
    ast.Break,
    ast.Continue,
    ast.Pass,
    ast.FunctionDef,
    ast.arguments,
    ast.arg,
    ast.Return,
    ast.Call,
    ast.Attribute,
    ast.keyword,
    ast.Subscript,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)


def _safe_range(*args: int) -> range:
    r = range(*args)
    if len(r) > MAX_RANGE:
        raise ProgramError("limit", f"range of {len(r)} elements (at most {MAX_RANGE})")
    return r


_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "Add": lambda a, b: a + b,
    "Sub": lambda a, b: a - b,
    "Mult": lambda a, b: a * b,
    "Div": lambda a, b: a / b,
    "FloorDiv": lambda a, b: a // b,
    "Mod": lambda a, b: a % b,
    "Pow": lambda a, b: a**b,
}
MAX_MAGNITUDE = 1e9


def _binop(name: str, a: Any, b: Any) -> Any:
    """Arithmetic on numbers only (no string or list repetition), bounded in size."""
    for v in (a, b):
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ProgramError("invalid", f"arithmetic on {type(v).__name__} is not allowed")
    if name == "Pow" and (abs(b) > 64 or abs(a) > MAX_MAGNITUDE):
        raise ProgramError("limit", f"power {a!r} ** {b!r} is too large")
    if name not in _OPS:
        raise ProgramError("forbidden", f"operator {name} is not allowed")
    out = _OPS[name](a, b)
    if abs(out) > MAX_MAGNITUDE:
        raise ProgramError("limit", f"value {out:.3g} exceeds {MAX_MAGNITUDE:g}")
    return out


class _GuardArithmetic(ast.NodeTransformer):
    """Rewrite ``a <op> b`` as ``__binop("<Op>", a, b)`` (and ``x <op>= b`` likewise)."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        call = ast.Call(
            func=ast.Name("__binop", ast.Load()),
            args=[ast.Constant(type(node.op).__name__), node.left, node.right],
            keywords=[],
        )
        return ast.copy_location(call, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.target, ast.Name):
            raise ProgramError(
                "forbidden", f"line {node.lineno}: augmented assignment to a non-name"
            )
        value = ast.Call(
            func=ast.Name("__binop", ast.Load()),
            args=[
                ast.Constant(type(node.op).__name__),
                ast.Name(node.target.id, ast.Load()),
                node.value,
            ],
            keywords=[],
        )
        return ast.copy_location(ast.Assign(targets=[node.target], value=value), node)


SAFE_BUILTINS: dict[str, Callable[..., Any]] = {
    "range": _safe_range,
    "min": min,
    "max": max,
    "abs": abs,
    "int": int,
    "float": float,
    "round": round,
    "len": len,
}


def check_source(source: str, *, entry: str = "build", argument: str = "world") -> ast.Module:
    """Parse ``source`` and check it against the whitelist; return the tree.

    Raises:
        ProgramError: ``size`` (too long / too many nodes), ``syntax``, or ``forbidden``
            (a construct or name outside the whitelist), with the offending line.
    """
    if not isinstance(source, str):
        raise ProgramError("syntax", f"a program must be a string, got {type(source).__name__}")
    if len(source) > MAX_SOURCE_CHARS:
        raise ProgramError("size", f"{len(source)} characters (at most {MAX_SOURCE_CHARS})")
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        raise ProgramError("syntax", f"line {exc.lineno}: {exc.msg}") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise ProgramError("size", f"{len(nodes)} syntax nodes (at most {MAX_NODES})")
    for node in nodes:
        line = getattr(node, "lineno", "?")
        if not isinstance(node, _ALLOWED_NODES):
            raise ProgramError("forbidden", f"line {line}: {type(node).__name__} is not allowed")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise ProgramError("forbidden", f"line {line}: private name {node.id!r}")
        if isinstance(node, ast.Attribute) and not (
            node.attr == "place" and isinstance(node.value, ast.Name) and node.value.id == argument
        ):
            raise ProgramError(
                "forbidden", f"line {line}: attribute .{node.attr} (only {argument}.place)"
            )
        if isinstance(node, ast.FunctionDef):
            if node.name != entry or node.decorator_list or node.returns is not None:
                raise ProgramError(
                    "forbidden", f"line {line}: only a plain `def {entry}({argument})` is allowed"
                )
            args = node.args
            if [a.arg for a in args.args] != [argument] or args.vararg or args.kwarg:
                raise ProgramError("forbidden", f"line {line}: {entry} takes exactly ({argument})")
            if args.kwonlyargs or args.posonlyargs or args.defaults:
                raise ProgramError("forbidden", f"line {line}: {entry} takes exactly ({argument})")
        if isinstance(node, ast.Call):
            fn = node.func
            ok = (isinstance(fn, ast.Name) and fn.id in SAFE_BUILTINS) or isinstance(
                fn, ast.Attribute
            )
            if not ok:
                raise ProgramError("forbidden", f"line {line}: call of {ast.unparse(fn)!r}")
        if isinstance(node, ast.Constant) and isinstance(node.value, bytes | complex):
            raise ProgramError("forbidden", f"line {line}: {type(node.value).__name__} constant")
    for stmt in tree.body:
        if isinstance(
            stmt,
            ast.FunctionDef
            | ast.Assign
            | ast.AugAssign
            | ast.Expr
            | ast.Pass
            | ast.For
            | ast.While
            | ast.If,
        ):
            continue
        raise ProgramError(
            "forbidden",
            f"line {stmt.lineno}: top level holds only assignments, loops, ifs and def {entry}",
        )
    return tree


class _Budget:
    """A trace function that stops the program after ``max_lines`` lines or ``max_seconds``."""

    def __init__(self, max_lines: int, max_seconds: float) -> None:
        self.max_lines = max_lines
        self.deadline = time.perf_counter() + max_seconds
        self.max_seconds = max_seconds
        self.lines = 0

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != "<world program>":
            return None
        if event == "line":
            self.lines += 1
            if self.lines > self.max_lines:
                raise ProgramError("limit", f"ran more than {self.max_lines} lines")
            if time.perf_counter() > self.deadline:
                raise ProgramError("limit", f"ran longer than {self.max_seconds:g} s")
        return self


def execute(
    tree: ast.Module,
    *,
    env: dict[str, Any] | None = None,
    call: tuple[str, Any] | None = None,
    max_lines: int = 5000,
    max_seconds: float = 0.5,
) -> dict[str, Any]:
    """Run a checked program with safe builtins under a line/time budget; return its globals.

    ``call = (name, argument)`` then calls the function ``name`` the program defined (under
    the same budget). Errors inside the program become :class:`ProgramError` (``runtime``).
    """
    namespace: dict[str, Any] = {
        "__builtins__": dict(SAFE_BUILTINS),
        "__binop": _binop,
        **(env or {}),
    }
    guarded = ast.fix_missing_locations(_GuardArithmetic().visit(copy.deepcopy(tree)))
    code = compile(guarded, "<world program>", "exec")
    budget = _Budget(max_lines, max_seconds)
    previous = sys.gettrace()
    sys.settrace(budget)
    try:
        exec(code, namespace)
        if call is not None:
            name, argument = call
            fn = namespace.get(name)
            if fn is not None:
                if not callable(fn):
                    raise ProgramError("runtime", f"{name} is not a function")
                fn(argument)
    except ProgramError:
        raise
    except RecursionError:
        raise ProgramError("limit", "recursion too deep") from None
    except Exception as exc:
        raise ProgramError("runtime", f"{type(exc).__name__}: {exc}") from None
    finally:
        sys.settrace(previous)
    namespace.pop("__builtins__", None)
    namespace.pop("__binop", None)
    return namespace
