r"""KL-regularised linear-quadratic control: penalties, Riccati and Lyapunov solvers in JAX.

Linear time-invariant dynamics with Gaussian process noise ``x+ = A x + B u + w``,
``w ~ N(0, Sigma_w)``. Regularising the controlled transition ``N(A x + B u, Sigma_w)``
towards the passive one ``N(A x, Sigma_w)`` (equal covariances, mean shift ``B u``) gives a
quadratic control penalty ``beta * D = u^T R u``:

===========  ========================================  =====================================
divergence   ``R``                                      as ``Sigma_w = rho S -> 0``
===========  ========================================  =====================================
``kl``       ``beta/2 B^T Sigma_w^{-1} B``              blows up like ``1/rho``
``wkl``      ``beta/2 B^T B``                           independent of the noise
``kwkl``     ``beta/2 B^T (Sigma_w + lam I)^{-1} B``    tends to ``beta/(2 lam) B^T B``
``w2``       ``beta B^T B`` (Bures-W2 squared)          independent of the noise
``lqr``      ``beta I`` (plain LQR)                     -
===========  ========================================  =====================================

KL's penalty has the *shape* of ``B^T Sigma_w^{-1} B``: with anisotropic noise in the actuated
directions (a precise actuator beside a noisy one) it is ill-conditioned, and no choice of
``beta`` turns it into WKL's ``B^T B``. With ``Sigma_w = rho I`` it is ``B^T B / rho``: then KL
with ``beta`` is WKL with ``beta / rho``, the same controller.

Every function here is pure JAX (float64 under :func:`~icml26.transport_kl._x64.x64`):
differentiable and ``jax.vmap``-able over ``rho``, ``beta`` and ``lam``. The discounted
Riccati equation is solved by a fixed number of structured-doubling steps (quadratic
convergence; reverse-mode differentiable through the loop), the discounted Lyapunov equation
by one linear solve of its Kronecker form (exact, for the small state dimensions of control
examples: ``n^2 x n^2``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from icml26.transport_kl._checks import is_concrete
from icml26.transport_kl._x64 import x64

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "DIVERGENCES",
    "RiccatiSolution",
    "closed_loop_costs",
    "discounted_lyapunov",
    "double_integrator",
    "penalty_matrix",
    "riccati",
    "riccati_residual",
    "simulate_linear",
    "solve_discounted_riccati",
]

DIVERGENCES = ("kl", "wkl", "kwkl", "w2", "lqr")


def double_integrator(
    dt: float = 0.1, dim: int = 2, gains: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(A, B)`` of a ``dim``-axis double integrator (positions, velocities), zero-order hold.

    Args:
        dt: the time step, > 0.
        dim: the number of axes (and of inputs), >= 1.
        gains: one actuator gain per input (default all 1): input ``i`` accelerates axis ``i``
            by ``gains[i] * u_i``.

    Returns:
        ``A`` of shape ``(2 dim, 2 dim)`` and ``B`` of shape ``(2 dim, dim)``.

    Raises:
        ValueError: ``dt <= 0``, ``dim < 1`` or gains of the wrong length.
    """
    if dt <= 0 or dim < 1:
        raise ValueError(f"need dt > 0 and dim >= 1, got dt={dt}, dim={dim}")
    g = np.ones(dim) if gains is None else np.asarray(gains, float)
    if g.shape != (dim,):
        raise ValueError(f"gains must hold {dim} values, got shape {g.shape}")
    eye, zero = np.eye(dim), np.zeros((dim, dim))
    a = np.block([[eye, dt * eye], [zero, eye]])
    b = np.vstack([0.5 * dt**2 * np.diag(g), dt * np.diag(g)])
    return a, b


@x64
def penalty_matrix(
    divergence: str, b: Any, noise_cov: Any, beta: Any = 1.0, lam: Any = 1.0
) -> Array:
    """The control weight ``R`` induced by ``beta * D(N(Ax+Bu, Sw) | N(Ax, Sw))``.

    Pure JAX: ``jax.vmap`` over ``noise_cov``, ``beta`` or ``lam`` (``divergence`` is static).
    KL meeting a noise covariance that is singular on ``range(B)`` gives ``inf`` entries (the
    KL is infinite for every ``u`` moving the mean off the noise's support).

    Args:
        divergence: one of :data:`DIVERGENCES`.
        b: ``(n, m)`` input matrix.
        noise_cov: ``(n, n)`` process-noise covariance ``Sigma_w`` (PSD).
        beta: the regularisation weight, > 0.
        lam: KWKL's regulariser, >= 0 (``lam = 0`` is KL).

    Returns:
        ``(m, m)`` float64 array.

    Raises:
        ValueError: an unknown divergence, or shapes that do not fit.
    """
    b = jnp.asarray(b, jnp.float64)
    sw = jnp.asarray(noise_cov, jnp.float64)
    n, m = b.shape
    if sw.shape[-2:] != (n, n):
        raise ValueError(f"noise_cov must be ({n}, {n}) to match B, got {sw.shape}")
    if divergence not in DIVERGENCES:
        raise ValueError(f"unknown divergence {divergence!r}; choose from {', '.join(DIVERGENCES)}")
    beta = jnp.asarray(beta, jnp.float64)
    if divergence == "kl":
        w, v = jnp.linalg.eigh(sw)
        tiny = n * jnp.finfo(jnp.float64).eps * jnp.maximum(w[-1], 1e-300)
        inv = jnp.where(w > tiny, 1.0 / jnp.where(w > tiny, w, 1.0), 0.0)
        vb = v.T @ b
        r = 0.5 * beta * (vb.T * inv) @ vb
        # a direction of range(B) outside the noise's support: infinite penalty
        leak = jnp.sum(jnp.where(w > tiny, 0.0, jnp.sum(vb**2, axis=1)))
        return jnp.where(leak > 1e-12 * jnp.sum(b**2), jnp.inf, r)
    if divergence == "wkl":
        return 0.5 * beta * b.T @ b
    if divergence == "kwkl":
        lam = jnp.asarray(lam, jnp.float64)
        return 0.5 * beta * b.T @ jnp.linalg.solve(sw + lam * jnp.eye(n), b)
    if divergence == "w2":
        return beta * b.T @ b
    return beta * jnp.eye(m)


def _matrix(name: str, x: Any, shape: tuple[int, int]) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def _gamma(gamma: Any, closed: bool) -> None:
    g = float(np.asarray(gamma))
    if not (0 < g < 1 or (closed and g == 1)):
        raise ValueError(f"gamma must be in (0, {'1]' if closed else '1)'}, got {g}")


def _float64(check: Callable[..., None]) -> Callable[[F], F]:
    """Run a pure-JAX solver in float64 and validate its inputs when they are concrete.

    Inside someone else's ``jit``/``vmap`` the inputs are tracers: nothing can be checked or
    switched there, so the solver runs in the caller's precision, with a warning when that is
    float32 (a silent float32 Riccati solve is off by ~1e-6 relative).
    """

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not is_concrete(*jax.tree_util.tree_leaves((args, kwargs))):
                if jnp.asarray(0.0).dtype != jnp.float64:
                    warnings.warn(
                        f"{fn.__name__} traced without jax_enable_x64: it runs in float32; "
                        "trace it under `with jax.enable_x64(True):` for float64",
                        stacklevel=2,
                    )
                return fn(*args, **kwargs)
            check(*args, **kwargs)
            with jax.enable_x64(True):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return wrap


def _check_riccati(a: Any, b: Any, q: Any, r: Any, gamma: Any = 1.0, **_: Any) -> None:
    bb = np.asarray(b, dtype=float)
    if bb.ndim != 2:
        raise ValueError(f"b must be an (n, m) matrix, got shape {bb.shape}")
    n, m = bb.shape
    _matrix("a", a, (n, n))
    _matrix("b", b, (n, m))
    _matrix("q", q, (n, n))
    _matrix("r", r, (m, m))
    _gamma(gamma, closed=True)


def _check_lyapunov(a: Any, q: Any, gamma: Any = 1.0) -> None:
    aa = np.asarray(a, dtype=float)
    if aa.ndim != 2 or aa.shape[0] != aa.shape[1]:
        raise ValueError(f"a must be a square matrix, got shape {aa.shape}")
    _matrix("a", a, aa.shape)
    _matrix("q", q, aa.shape)
    if not float(np.asarray(gamma)) > 0:
        raise ValueError(f"gamma must be > 0, got {gamma}")


def _check_costs(
    a: Any,
    b: Any,
    k: Any,
    noise_cov: Any,
    *,
    q_eval: Any,
    r_eval: Any,
    gamma: Any,
    x0_cov: Any,
) -> None:
    bb = np.asarray(b, dtype=float)
    if bb.ndim != 2:
        raise ValueError(f"b must be an (n, m) matrix, got shape {bb.shape}")
    n, m = bb.shape
    for name, x, shape in (
        ("a", a, (n, n)),
        ("b", b, (n, m)),
        ("k", k, (m, n)),
        ("noise_cov", noise_cov, (n, n)),
        ("q_eval", q_eval, (n, n)),
        ("r_eval", r_eval, (m, m)),
        ("x0_cov", x0_cov, (n, n)),
    ):
        _matrix(name, x, shape)
    _gamma(gamma, closed=False)


@functools.partial(jax.jit, static_argnames=("iterations",))
def _riccati_core(
    a: Any, b: Any, q: Any, r: Any, gamma: Any, iterations: int
) -> tuple[Array, Array, Array]:
    """The doubling iteration; ``P`` and ``K`` are NaN where the residual shows no convergence.

    Jitted (compiled once per shape, dtype and ``iterations``), so eager calls in a loop over
    ``rho`` or ``beta`` do not retrace the loop body each time.
    """
    ga = jnp.sqrt(gamma) * a
    gb = jnp.sqrt(gamma) * b
    g0 = gb @ jnp.linalg.solve(r, gb.T)
    eye = jnp.eye(a.shape[-1], dtype=ga.dtype)

    def body(_: Any, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        a_k, g_k, h_k = state
        w = eye + g_k @ h_k
        wa = jnp.linalg.solve(w, a_k)
        wg = jnp.linalg.solve(w, g_k)
        g_n = g_k + a_k @ wg @ a_k.T
        h_n = h_k + a_k.T @ h_k @ wa
        return a_k @ wa, 0.5 * (g_n + g_n.T), 0.5 * (h_n + h_n.T)

    _, _, p = jax.lax.fori_loop(
        0, iterations, body, (ga, 0.5 * (g0 + g0.T), jnp.asarray(q, ga.dtype))
    )
    k = jnp.linalg.solve(r + gb.T @ p @ gb, gb.T @ p @ ga)
    rhs = q + ga.T @ p @ ga - ga.T @ p @ gb @ k
    residual = jnp.linalg.norm(p - rhs) / jnp.maximum(jnp.linalg.norm(p), 1e-300)
    tol = 1e-8 if p.dtype == jnp.float64 else 1e-3
    ok = residual < tol
    p, k = jnp.where(ok, p, jnp.nan), jnp.where(ok, k, jnp.nan)
    return p, k, residual


@_float64(_check_riccati)
def riccati(
    a: Any, b: Any, q: Any, r: Any, gamma: Any = 1.0, *, iterations: int = 40
) -> tuple[Array, Array]:
    """Discounted infinite-horizon LQR in pure JAX: ``P`` and the gain ``K`` (``u = -K x``).

    Solves ``P = Q + g A^T P A - g^2 A^T P B (R + g B^T P B)^{-1} B^T P A`` by ``iterations``
    steps of structured doubling on ``(sqrt(g) A, sqrt(g) B)``; each step squares the
    convergence factor, so 40 steps reach machine precision for any stabilisable problem whose
    closed loop is not within ``1e-9`` of the unit circle; the Riccati residual is checked and
    an unconverged solve gives NaN (``P`` and ``K``). Differentiable (reverse and forward mode)
    and vmappable over every argument. Called eagerly it checks its inputs and runs in float64;
    traced inside your own ``jit``/``vmap`` it runs in your precision (a warning says when that
    is float32: trace it under ``jax.enable_x64(True)``).

    Args:
        a: ``(n, n)`` dynamics.
        b: ``(n, m)`` input matrix.
        q: ``(n, n)`` state weight (PSD).
        r: ``(m, m)`` control weight (SPD).
        gamma: the discount in ``(0, 1]``.
        iterations: doubling steps.

    Returns:
        ``(P, K)`` with ``K = g (R + g B^T P B)^{-1} B^T P A``.

    Raises:
        ValueError: (eager calls) an argument of the wrong shape or with NaN/inf (named),
            ``gamma`` outside ``(0, 1]``, or no convergence in ``iterations`` steps.
    """
    p, k, residual = _riccati_core(a, b, q, r, gamma, iterations)
    if is_concrete(p) and not bool(jnp.all(jnp.isfinite(p))):
        raise ValueError(
            f"riccati did not converge in {iterations} doubling steps (relative residual "
            f"{float(residual):.3g}): raise iterations, or the problem is not stabilisable "
            "(or its discounted closed loop sits on the unit circle)"
        )
    return p, k


@_float64(_check_lyapunov)
def discounted_lyapunov(a: Any, q: Any, gamma: Any = 1.0) -> Array:
    """``Y = Q + g A Y A^T``, the discounted Lyapunov equation, in pure JAX.

    One linear solve of ``(I - g A kron A) vec(Y) = vec(Q)``: exact, differentiable and
    vmappable; ``O(n^6)`` work, meant for state dimensions up to a few dozen.

    Args:
        a: ``(n, n)``.
        q: ``(n, n)``.
        gamma: the discount (``g A`` must have spectral radius below 1 for a PSD answer).

    Returns:
        ``(n, n)`` array ``Y`` (float64 when called eagerly).

    Raises:
        ValueError: (eager calls) ``a`` not square, ``q`` of another shape, NaN/inf, or
            ``gamma <= 0``.
    """
    n = a.shape[-1]
    big = jnp.eye(n * n, dtype=a.dtype) - gamma * jnp.kron(a, a)
    y = jnp.linalg.solve(big, jnp.reshape(q, (n * n,)))
    y = jnp.reshape(y, (n, n))
    return 0.5 * (y + y.T)


@_float64(_check_costs)
def closed_loop_costs(
    a: Any, b: Any, k: Any, noise_cov: Any, *, q_eval: Any, r_eval: Any, gamma: Any, x0_cov: Any
) -> tuple[Array, Array]:
    """Expected discounted state cost and control energy of ``u = -K x`` (exact, pure JAX).

    With ``C_0 = x0_cov`` and ``C_{t+1} = A_cl C_t A_cl^T + Sigma_w``, ``Y = sum_t g^t C_t``
    solves ``Y = C_0 + g Sigma_w / (1 - g) + g A_cl Y A_cl^T``; the costs are
    ``tr(Q Y)`` and ``tr(K^T R K Y)``.

    Args:
        a: the dynamics matrix ``A``.
        b: the input matrix ``B``.
        k: the feedback gain ``K`` (``u = -K x``).
        noise_cov: ``Sigma_w``.
        q_eval: the state weight of the evaluation.
        r_eval: the control weight of the evaluation.
        gamma: the discount in ``(0, 1)``.
        x0_cov: covariance of the initial state (mean 0).

    Returns:
        ``(state_cost, control_cost)``: ``inf`` where the discounted closed loop is unstable
        (float64 when called eagerly).

    Raises:
        ValueError: (eager calls) an argument of the wrong shape or with NaN/inf (named), or
            ``gamma`` outside ``(0, 1)``.
    """
    a_cl = a - b @ k
    y = discounted_lyapunov(a_cl, x0_cov + gamma / (1.0 - gamma) * noise_cov, gamma)
    radius = jnp.max(jnp.abs(jnp.linalg.eigvals(a_cl)))
    stable = jnp.sqrt(gamma) * radius < 1.0
    state = jnp.where(stable, jnp.trace(q_eval @ y), jnp.inf)
    control = jnp.where(stable, jnp.trace(k.T @ r_eval @ k @ y), jnp.inf)
    return state, control


@dataclass(frozen=True)
class RiccatiSolution:
    """``P`` (value matrix), ``K`` (``u = -K x``) and diagnostics.

    Attributes:
        P: the value matrix.
        K: the gain.
        residual: relative Frobenius residual of the Riccati equation.
        ok: finite, and ``residual < 1e-8``.
    """

    P: np.ndarray
    K: np.ndarray
    residual: float

    @property
    def ok(self) -> bool:
        """Finite and solved to a relative residual below ``1e-8``."""
        return bool(
            np.all(np.isfinite(self.P)) and np.all(np.isfinite(self.K)) and self.residual < 1e-8
        )


def riccati_residual(a: Any, b: Any, q: Any, r: Any, gamma: float, p: Any) -> float:
    """``|P - Q - g A^T P A + g^2 A^T P B (R + g B^T P B)^{-1} B^T P A| / |P|`` (Frobenius).

    Args:
        a, b, q, r: the problem.
        gamma: the discount.
        p: a candidate solution.

    Returns:
        The relative residual.
    """
    a, b, q, r, p = (np.asarray(x, float) for x in (a, b, q, r, p))
    gain = np.linalg.solve(r + gamma * b.T @ p @ b, gamma * b.T @ p @ a)
    rhs = q + gamma * a.T @ p @ a - gamma * a.T @ p @ b @ gain
    return float(np.linalg.norm(p - rhs)) / max(float(np.linalg.norm(p)), 1e-300)


@x64
def solve_discounted_riccati(
    a: Any, b: Any, q: Any, r: Any, gamma: float = 1.0, *, iterations: int = 40
) -> RiccatiSolution:
    """:func:`riccati` in float64 with input checks and the residual (NumPy out).

    Args:
        a: the dynamics matrix ``A``.
        b: the input matrix ``B``.
        q: the state weight ``Q``.
        r: the control weight ``R``, SPD (``inf`` entries here or in ``q``, e.g. KL's penalty
            with a noise singular on ``range(B)``, give a solution that is not ``ok``).
        gamma: the discount in ``(0, 1]``.
        iterations: doubling steps.

    Returns:
        :class:`RiccatiSolution`.

    Raises:
        ValueError: shapes that do not fit, or ``gamma`` outside ``(0, 1]``.
    """
    a, b, q, r = (np.asarray(x, float) for x in (a, b, q, r))
    n, m = b.shape
    if a.shape != (n, n) or q.shape != (n, n) or r.shape != (m, m):
        raise ValueError(f"shapes do not fit: A {a.shape}, B {b.shape}, Q {q.shape}, R {r.shape}")
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma}")
    if not np.all(np.isfinite(r)):
        return RiccatiSolution(np.full((n, n), np.nan), np.full((m, n), np.nan), np.inf)
    p, k, _ = _riccati_core(a, b, q, r, gamma, iterations)
    p, k = np.asarray(p), np.asarray(k)
    res = riccati_residual(a, b, q, r, gamma, p) if np.all(np.isfinite(p)) else np.inf
    return RiccatiSolution(P=p, K=k, residual=res)


@jax.jit
def _rollouts(
    a_cl: Array, k: Array, q_eval: Array, r_eval: Array, x0: Array, noise: Array, gamma: Array
) -> Array:
    def step(x: Array, w: Array) -> tuple[Array, Array]:
        u = -x @ k.T
        c = jnp.einsum("ni,ij,nj->n", x, q_eval, x) + jnp.einsum("ni,ij,nj->n", u, r_eval, u)
        return x @ a_cl.T + w, c

    _, costs = jax.lax.scan(step, x0, noise)  # (T, n)
    disc = gamma ** jnp.arange(noise.shape[0], dtype=x0.dtype)
    return disc @ costs


@x64
def simulate_linear(
    a: Any,
    b: Any,
    gain: Any,
    noise_cov: Any,
    *,
    q_eval: Any,
    r_eval: Any,
    gamma: float,
    horizon: int,
    x0: Any,
    key: Array,
) -> np.ndarray:
    """Monte-Carlo discounted costs ``sum_k g^k (x^T Q x + u^T R u)``, one per initial state.

    Args:
        a, b, gain: dynamics, input matrix and gain (``u = -K x``).
        noise_cov: ``Sigma_w``.
        q_eval, r_eval: the evaluation's weights.
        gamma: the discount.
        horizon: steps per rollout.
        x0: ``(rollouts, n)`` initial states.
        key: a JAX PRNG key.

    Returns:
        ``(rollouts,)`` discounted costs.
    """
    a, b, gain = (np.asarray(x, float) for x in (a, b, gain))
    x0 = jnp.asarray(x0, jnp.float64)
    n = a.shape[0]
    w, v = np.linalg.eigh(np.asarray(noise_cov, float))
    root = v * np.sqrt(np.maximum(w, 0.0))
    z = jax.random.normal(key, (horizon, x0.shape[0], n), jnp.float64)
    costs = _rollouts(
        jnp.asarray(a - b @ gain),
        jnp.asarray(gain),
        jnp.asarray(q_eval, jnp.float64),
        jnp.asarray(r_eval, jnp.float64),
        x0,
        z @ jnp.asarray(root.T),
        jnp.asarray(gamma, jnp.float64),
    )
    return np.asarray(costs)
