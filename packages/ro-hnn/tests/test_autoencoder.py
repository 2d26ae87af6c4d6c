"""Symplectic autoencoder: exact left inverse, exact symplecticity (random and trained), PSD, baselines."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.ro_hnn.autoencoder import (
    ACTIVATIONS,
    MLPAutoencoder,
    PSDAutoencoder,
    SymplecticAutoencoder,
    canonical_j,
    psd_basis,
    smooth_leaky,
    smooth_leaky_inverse,
    split_state,
    symplecticity_defect,
)
from icml26.ro_hnn.manifolds import biorthogonal_defect


@settings(max_examples=50, deadline=None)
@given(st.floats(-50, 50), st.floats(0.0, 0.9))
def test_activation_inverse(x: float, c: float) -> None:
    y = smooth_leaky(jnp.asarray(x), c)
    assert abs(float(smooth_leaky_inverse(y, c)) - x) < 1e-10 * max(1.0, abs(x))
    assert float(jax.grad(lambda t: smooth_leaky(t, c))(jnp.asarray(x))) > 0


def _ae(
    seed: int, n: int = 9, d: int = 3, hidden: tuple[int, ...] = (5, 7)
) -> SymplecticAutoencoder:
    ae = SymplecticAutoencoder(n, d, hidden=hidden, rngs=nnx.Rngs(seed))
    # random biases, so the test does not rely on zero initialisation
    for i, layer in enumerate(ae.layers):
        layer.b[...] = jax.random.normal(jax.random.key(seed + 100 + i), layer.b.shape)
    return ae


@nnx.jit
def _roundtrip_and_defect(ae: SymplecticAutoencoder, z: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Compiled once for every drawn model (same shapes): eager dispatch of the encoder's
    inverse iterations and the Jacobian would cost seconds per example."""
    return ae.encode(ae.decode(z)), symplecticity_defect(ae.decode, z)


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10_000))
def test_decoder_is_symplectic_and_encoder_is_left_inverse_for_random_parameters(seed: int) -> None:
    ae = _ae(seed)
    z = jax.random.normal(jax.random.key(seed), (6,))
    roundtrip, defect = _roundtrip_and_defect(ae, z)
    np.testing.assert_allclose(roundtrip, z, atol=1e-12)
    assert float(defect) < 1e-12


def test_defect_is_a_real_check() -> None:
    """The same measurement flags a decoder that is not symplectic."""
    ae = _ae(0)
    ae.layers[0].psi[...] = ae.layers[0].psi[...] * 1.1  # break Ψᵀ Φ = I
    z = jnp.ones(6)
    _, defect = _roundtrip_and_defect(ae, z)  # the compiled check of the test above
    assert float(defect) > 1e-3


def test_symplecticity_defect_against_a_hand_computed_jacobian() -> None:
    """Linear decoder x = A z: defect = |Aᵀ J A - J|_F computed without autodiff."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 4))
    expected = np.linalg.norm(a.T @ np.asarray(canonical_j(3)) @ a - np.asarray(canonical_j(2)))
    got = float(symplecticity_defect(lambda z: jnp.asarray(a) @ z, jnp.zeros(4)))
    assert abs(got - expected) < 1e-12


def test_psd_basis_is_symplectic_and_exact_on_its_subspace(rng: np.random.Generator) -> None:
    v_true = np.linalg.qr(rng.standard_normal((10, 3)))[0]
    q = rng.standard_normal((40, 3)) @ v_true.T
    p = rng.standard_normal((40, 3)) @ v_true.T
    v = psd_basis(q, p, 3)
    np.testing.assert_allclose(v.T @ v, np.eye(3), atol=1e-12)
    ae = PSDAutoencoder(jnp.asarray(v), jnp.zeros(10))
    assert float(symplecticity_defect(ae.decode, jnp.ones(6))) < 1e-13
    x = jnp.asarray(np.concatenate([q[0], p[0]]))
    np.testing.assert_allclose(ae.decode(ae.encode(x)), x, atol=1e-12)


def test_init_from_basis_starts_on_the_linear_subspace(rng: np.random.Generator) -> None:
    v = np.linalg.qr(rng.standard_normal((9, 3)))[0]
    ae = SymplecticAutoencoder(9, 3, hidden=(5,), rngs=nnx.Rngs(0))
    ae.init_from_basis(jnp.asarray(v), jnp.full(9, 0.5), key=jax.random.key(0), noise=0.0)
    for layer in ae.layers:
        assert float(biorthogonal_defect(layer.phi[...], layer.psi[...])) < 1e-13
    q = ae.embed(jnp.array([0.3, -0.2, 0.1]))
    resid = (np.eye(9) - v @ v.T) @ (np.asarray(q) - 0.5)
    assert np.linalg.norm(resid) < 1e-12


def test_unconstrained_autoencoder_is_not_symplectic_in_general(rng: np.random.Generator) -> None:
    v = np.linalg.qr(rng.standard_normal((9, 3)))[0]
    ae = MLPAutoencoder(jnp.asarray(v), jnp.zeros(9), hidden=(8,), rngs=nnx.Rngs(0))
    defect = nnx.jit(lambda m, z: symplecticity_defect(m.decode, z))  # one compile, two models
    assert float(defect(ae, jnp.ones(6))) < 1e-13  # starts at PSD
    last = ae.dec.linears[-1]
    last.kernel[...] = 0.3 * jax.random.normal(jax.random.key(1), last.kernel.shape)
    assert float(defect(ae, jnp.ones(6))) > 1e-2


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError, match="even last dimension"):
        split_state(jnp.ones(7))
    with pytest.raises(ValueError, match="non-decreasing"):
        SymplecticAutoencoder(9, 3, hidden=(2,), rngs=nnx.Rngs(0))
    with pytest.raises(ValueError, match="0 < d <= n"):
        SymplecticAutoencoder(3, 4, hidden=(), rngs=nnx.Rngs(0))
    ae = _ae(0)
    with pytest.raises(ValueError, match="even last dimension"):
        ae.encode(jnp.ones(17))
    with pytest.raises(ValueError, match="shape"):
        psd_basis(np.ones((4, 3)), np.ones((4, 2)), 2)


@pytest.mark.parametrize(
    ("acts", "hidden"),
    [
        # slow: the default session has a three-layer asinh stack compiled like the evaluation
        # (test_asinh_stack_compiled_like_the_evaluation)
        pytest.param(("identity", "asinh", "smooth_leaky"), (6, 10), marks=pytest.mark.slow),
        pytest.param(("asinh",) * 4, (6, 10, 14), marks=pytest.mark.slow),
        pytest.param(
            ("identity", "asinh", "smooth_leaky", "asinh"), (6, 10, 14), marks=pytest.mark.slow
        ),
    ],
)
def test_deep_wide_stack_with_an_activation_per_layer_is_exact(
    acts: tuple[str, ...], hidden: tuple[int, ...]
) -> None:
    """A deep stack (d -> 6 -> 10 [-> 14] -> n) with per-layer activations: ``E ∘ Ψ = id`` and
    ``DΨᵀ J DΨ = J`` to round-off, and the decoder's image is not one affine subspace."""
    ae = SymplecticAutoencoder(16, 3, hidden=hidden, activations=acts, c=0.8, rngs=nnx.Rngs(3))
    key = jax.random.key(0)
    for i, layer in enumerate(ae.layers):
        layer.b[...] = 0.3 * jax.random.normal(jax.random.fold_in(key, i), layer.b.shape)
    zs = jax.random.normal(jax.random.key(1), (5, 6))
    round_trip = jax.jit(jax.vmap(lambda z: ae.encode(ae.decode(z))))  # compiled: eager is slow
    defects = jax.jit(jax.vmap(lambda z: symplecticity_defect(ae.decode, z)))
    np.testing.assert_allclose(round_trip(zs), zs, atol=1e-9)
    assert float(jnp.max(defects(zs))) < 1e-10
    qs = jax.jit(jax.vmap(ae.embed))(3 * jax.random.normal(jax.random.key(2), (40, 3)))
    centred = qs - qs.mean(0)
    sv = np.linalg.svd(np.asarray(centred), compute_uv=False)
    assert sv[3] > 1e-6 * sv[0]  # 3 latent dofs bend into more than 3 directions


def test_activation_names_are_checked() -> None:
    with pytest.raises(ValueError, match="one name per layer"):
        SymplecticAutoencoder(9, 3, hidden=(5,), activations=("asinh",), rngs=nnx.Rngs(0))
    with pytest.raises(ValueError, match="unknown activation"):
        SymplecticAutoencoder(9, 3, hidden=(5,), activations=("relu", "asinh"), rngs=nnx.Rngs(0))


def _activation_inverse_by_bisection(name: str, y: np.ndarray, c: float) -> np.ndarray:
    """An independent inverse of an increasing activation: 200 bisection steps in NumPy."""
    forward = {"asinh": lambda x: (1 - c) * x + c * np.arcsinh(x), "identity": lambda x: x}[name]
    lo = np.full_like(y, -1e6)
    hi = np.full_like(y, 1e6)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        below = forward(mid) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return 0.5 * (lo + hi)


@settings(max_examples=30, deadline=None)
@given(st.floats(-1e4, 1e4), st.floats(0.0, 0.99))
def test_asinh_inverse_against_bisection(x: float, c: float) -> None:
    forward, inverse = ACTIVATIONS["asinh"]
    y = float(forward(jnp.asarray(x), c))
    expected = _activation_inverse_by_bisection("asinh", np.asarray([y]), c)[0]
    assert abs(float(inverse(jnp.asarray(y), c)) - expected) < 1e-9 * max(1.0, abs(x))


def test_asinh_stack_compiled_like_the_evaluation() -> None:
    """An all-``asinh`` stack run as ``evaluate_model`` runs it (``jit`` of ``vmap``, weights
    traced): the latents match a NumPy layer-by-layer inversion and the defect is round-off.

    Regression: with the test session's ``--xla_cpu_multi_thread_eigen=false`` (conftest), XLA
    miscompiled the Newton loop started at its own input; the defect read 0.673."""
    ae = SymplecticAutoencoder(
        16, 3, hidden=(8, 16), activations=("asinh",) * 3, c=0.5, rngs=nnx.Rngs(0)
    )
    for i, layer in enumerate(ae.layers):
        layer.b[...] = 0.3 * jax.random.normal(jax.random.key(10 + i), layer.b.shape)
    graphdef, state = nnx.split(ae)

    @jax.jit
    def encode_and_defect(state, x):  # type: ignore[no-untyped-def]
        model = nnx.merge(graphdef, state)
        z = jax.vmap(model.encode)(x)
        return z, jax.vmap(lambda zz: symplecticity_defect(model.decode, zz))(z)

    x = jax.random.normal(jax.random.key(1), (4, 32))
    z, defects = encode_and_defect(state, x)
    q = np.asarray(x[:, :16])
    for layer in reversed(ae.layers):  # ρ_l(y) = σ⁻¹(Ψᵀ (y - b)), inverted by bisection
        u = (q - np.asarray(layer.b[...])) @ np.asarray(layer.psi[...])
        q = _activation_inverse_by_bisection("asinh", u, 0.5)
    np.testing.assert_allclose(np.asarray(z[:, :3]), q, atol=1e-9)
    assert float(jnp.max(defects)) < 1e-12
