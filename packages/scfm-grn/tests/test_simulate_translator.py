"""SERGIO simulation (deterministic, cached, follows the network) and the translator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml26.scfm_grn.networks import GeneNetwork
from icml26.scfm_grn.simulation import SimulationSpec, simulate
from icml26.scfm_grn.translator import Translator, TranslatorConfig, pair_features, standardise

CHAIN = GeneNetwork(
    ("m", "up", "down", "free"), (("m", "up", 4.0), ("m", "down", -4.0), ("up", "free", 2.0))
)


def test_simulation_is_deterministic_cached_and_follows_signs(tmp_path: Path) -> None:
    spec = SimulationSpec(n_cell_types=4, cells_per_type=50, seed=3)
    a = simulate(CHAIN, spec, cache=tmp_path)
    assert a.shape == (200, 4)
    assert (a >= 0).all()
    assert len(list(tmp_path.glob("sergio-*.npy"))) == 1
    b = simulate(CHAIN, spec, cache=False)
    np.testing.assert_array_equal(a, b)
    # across cell types the activator's target follows the master regulator, the repressed one opposes it
    types = a.reshape(4, 50, 4).mean(axis=1)
    assert np.corrcoef(types[:, 0], types[:, 1])[0, 1] > 0.5
    assert np.corrcoef(types[:, 0], types[:, 2])[0, 1] < -0.5
    noisy = simulate(
        CHAIN, SimulationSpec(n_cell_types=2, cells_per_type=20, noise="DS4", seed=3), cache=False
    )
    assert np.allclose(noisy, np.round(noisy))  # counts


def test_without_intrinsic_noise_a_cell_is_its_states_steady_state() -> None:
    """noise_s = 0: cells of one master-regulator state are equal, and a target is a fixed
    monotone function of its single regulator across states (what carries between datasets)."""
    x = simulate(
        CHAIN, SimulationSpec(n_cell_types=30, cells_per_type=2, noise_s=0, seed=4), cache=False
    )
    pairs = x.reshape(30, 2, 4)
    np.testing.assert_allclose(pairs[:, 0], pairs[:, 1])
    m, up, down = pairs[:, 0, 0], pairs[:, 0, 1], pairs[:, 0, 2]
    order = np.argsort(m)
    assert (np.diff(up[order]) >= -1e-9).all()
    assert (np.diff(down[order]) <= 1e-9).all()
    with pytest.raises(ValueError, match="noise_s"):
        SimulationSpec(noise_s=-1)


def test_bad_simulation_spec() -> None:
    with pytest.raises(ValueError, match="noise must be one of"):
        SimulationSpec(noise="DS99")
    with pytest.raises(ValueError, match="acyclic"):
        simulate(
            GeneNetwork(("a", "b"), (("a", "a", 1.0), ("a", "b", 1.0))),
            SimulationSpec(),
            cache=False,
        )


def test_translator_learns_a_separable_rule_and_standardise_is_label_free() -> None:
    rng = np.random.default_rng(0)
    feats = rng.normal(size=(12, 12, 4))
    adj = (feats[:, :, 0] > 1.0).astype(int)
    np.fill_diagonal(adj, 0)
    pairs = np.argwhere(~np.eye(12, dtype=bool))
    x = pair_features(standardise(feats), pairs)
    y = adj[pairs[:, 0], pairs[:, 1]]
    model = Translator(TranslatorConfig(steps=300, seed=0)).fit(x, y)
    p = model.predict(x)
    assert p[y == 1].min() > p[y == 0].mean()
    assert model.losses[-1] < 0.5 * model.losses[0]
    z = standardise(feats * 7.0 + 3.0)
    np.testing.assert_allclose(z, standardise(feats), atol=1e-5)


def test_translator_bad_input() -> None:
    with pytest.raises(ValueError, match="both edges and non-edges"):
        Translator().fit(np.zeros((4, 2)), np.zeros(4))
    with pytest.raises(RuntimeError, match="fit"):
        Translator().predict(np.zeros((2, 2)))
