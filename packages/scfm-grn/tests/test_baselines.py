"""Classical baselines against numpy/scipy/scikit-learn and a planted edge."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import mutual_info_score

from icml26.scfm_grn.baselines import (
    _discretise,
    genie3_scores,
    grnboost2_scores,
    mutual_information_scores,
    pearson_scores,
    spearman_scores,
)
from icml26.scfm_grn.data import krumsiek11
from icml26.scfm_grn.evaluate import corpus_scores
from icml26.scfm_grn.pretraining import pooled_covariance


@pytest.fixture
def planted() -> np.ndarray:
    """Gene 1 = 2 * gene 0 + noise; genes 2..5 independent."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6))
    x[:, 1] = 2 * x[:, 0] + 0.3 * rng.normal(size=300)
    return x


def test_correlations_match_references(planted: np.ndarray) -> None:
    np.testing.assert_allclose(pearson_scores(planted), np.abs(np.corrcoef(planted.T)), atol=1e-12)
    np.testing.assert_allclose(
        spearman_scores(planted), np.abs(spearmanr(planted).statistic), atol=1e-12
    )


def test_mutual_information_matches_sklearn(planted: np.ndarray) -> None:
    mi = mutual_information_scores(planted, n_bins=6)
    codes = _discretise(planted, 6)
    for i, j in [(0, 1), (2, 3), (0, 5)]:
        assert mi[i, j] == pytest.approx(mutual_info_score(codes[:, i], codes[:, j]), abs=1e-10)
    assert mi[0, 1] > 5 * mi[2, 3]


@pytest.mark.parametrize("fn", [genie3_scores, grnboost2_scores])
def test_tree_methods_recover_the_planted_edge(fn, planted: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    scores = fn(planted, seed=0) if fn is grnboost2_scores else fn(planted, n_trees=30, seed=0)
    assert scores.shape == (6, 6)
    np.testing.assert_array_equal(np.diag(scores), 0)
    off = scores.copy()
    off[np.eye(6, dtype=bool)] = -1
    top = set(np.argsort(-off, axis=None)[:2])
    assert top == {0 * 6 + 1, 1 * 6 + 0}  # 0 -> 1 and 1 -> 0 score highest
    # per target the importances are a distribution
    np.testing.assert_allclose(scores.sum(axis=0), 1.0, atol=1e-6)


def test_bad_expression() -> None:
    with pytest.raises(ValueError, match="NaN"):
        pearson_scores(np.array([[1.0, np.nan], [0.0, 1.0], [2.0, 2.0]]))
    with pytest.raises(ValueError, match="cells >= 3"):
        genie3_scores(np.ones((2, 4)))


def test_corpus_correlation_is_pooled_correlation_of_the_corpus() -> None:
    """``corpus_correlation`` on a dataset = |correlation| of the pretraining cells on its genes
    (one z-scored dataset: the pooled mean product is the Pearson correlation), independent
    of the dataset's own cells; a gene outside the vocabulary is refused."""
    data = krumsiek11()
    genes = list(data.genes)
    prior = (genes, pooled_covariance([data], genes))
    subset = genes[3:8]
    got = corpus_scores(prior, subset)
    idx = [genes.index(g) for g in subset]
    want = np.abs(np.corrcoef(data.values.T.astype(np.float64)))[np.ix_(idx, idx)]
    off = ~np.eye(len(subset), dtype=bool)
    np.testing.assert_allclose(got[off], want[off], atol=1e-5)
    with pytest.raises(ValueError, match="outside the pretraining vocabulary"):
        corpus_scores(prior, [*subset, "not_a_gene"])
