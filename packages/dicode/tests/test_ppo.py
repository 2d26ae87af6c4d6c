"""PPO: GAE against a direct double sum; the network's shapes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from icml26.dicode.ppo import gae as _gae

T, N = 7, 3
gae = jax.jit(_gae, static_argnums=(4, 5))  # compiled once for every example


def _direct(
    r: np.ndarray, v: np.ndarray, d: np.ndarray, last: np.ndarray, g: float, lam: float
) -> np.ndarray:
    """Â_t = Σ_{l>=0} (γλ)^l δ_{t+l}, truncated at the first episode end."""
    v_next = np.concatenate([v[1:], last[None]], axis=0)
    delta = r + g * v_next * (1 - d) - v
    adv = np.zeros_like(r)
    for t in range(T):
        for n in range(N):
            total, coef = 0.0, 1.0
            for k in range(t, T):
                total += coef * delta[k, n]
                if d[k, n]:
                    break
                coef *= g * lam
            adv[t, n] = total
    return adv


floats = st.floats(-2, 2, allow_nan=False, width=32)


@settings(max_examples=20, deadline=None)
@given(
    r=arrays(np.float32, (T, N), elements=floats),
    v=arrays(np.float32, (T, N), elements=floats),
    d=arrays(bool, (T, N)),
    last=arrays(np.float32, (N,), elements=floats),
)
def test_gae_matches_direct_sum(
    r: np.ndarray, v: np.ndarray, d: np.ndarray, last: np.ndarray
) -> None:
    adv, ret = gae(jnp.asarray(r), jnp.asarray(v), jnp.asarray(d), jnp.asarray(last), 0.9, 0.8)
    want = _direct(r.astype(float), v.astype(float), d.astype(float), last.astype(float), 0.9, 0.8)
    np.testing.assert_allclose(np.asarray(adv), want, atol=1e-4)
    np.testing.assert_allclose(np.asarray(ret), want + v, atol=1e-4)


def test_gae_lambda_one_is_the_discounted_return_minus_value() -> None:
    r = np.ones((T, 1), np.float32)
    v = np.zeros((T, 1), np.float32)
    d = np.zeros((T, 1), bool)
    adv, _ = gae(jnp.asarray(r), jnp.asarray(v), jnp.asarray(d), jnp.zeros(1), 0.5, 1.0)
    want = [(1 - 0.5 ** (T - t)) / 0.5 for t in range(T)]
    np.testing.assert_allclose(np.asarray(adv)[:, 0], want, rtol=1e-5)


def test_compiled_versions_counts_one_jit_function() -> None:
    from icml26.dicode.ppo import compiled_versions

    double = jax.jit(lambda x: 2 * x)
    assert compiled_versions(double) == 0
    double(jnp.ones(3))
    double(jnp.zeros(3))
    assert compiled_versions(double) == 1
    double(jnp.ones(4))  # a new shape: a second version
    assert compiled_versions(double) == 2
    with pytest.raises(TypeError, match="jit cache counter"):
        compiled_versions(lambda x: x)
