"""Who sees which images in a run: the classifier, the mixture's fit, the selection and the
evaluation sets, checked by content."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from icml26.nppr.config import RunConfig
from icml26.nppr.data import load_dataset
from icml26.nppr.evaluate import make_splits


def _rows(x: torch.Tensor) -> set[bytes]:
    return {r.numpy().tobytes() for r in x.flatten(1)}


def test_fit_and_selection_images_are_not_the_classifiers() -> None:
    data = load_dataset("digits")
    cfg = RunConfig(dataset="digits", n_train=5000, n_fit=300, n_select=100, n_eval=200)
    s = make_splits(data, cfg, 0)
    train, fit, sel, ev = (_rows(t) for t in (s.x_train, s.x_fit, s.x_select, s.x_eval))
    assert len(fit) > 250
    assert len(sel) > 80
    assert not train & fit
    assert not train & sel
    assert not fit & sel
    assert not ev & (train | fit | sel)  # evaluation images come from the test split only
    assert len(s.y_train) + len(s.y_fit) + len(s.y_select) <= len(data.y_train)
    assert len(s.y_eval) == 200


def test_each_replicate_draws_its_own_images() -> None:
    data = load_dataset("digits")
    cfg = RunConfig(dataset="digits", n_train=500, n_fit=100, n_select=50, n_eval=100)
    a, b = make_splits(data, cfg, 0), make_splits(data, cfg, 1)
    assert not torch.equal(a.x_eval, b.x_eval)
    assert not torch.equal(a.x_fit, b.x_fit)
    again = make_splits(data, cfg, 0)
    assert torch.equal(a.x_eval, again.x_eval)
    assert torch.equal(a.x_fit, again.x_fit)


def test_a_train_split_too_small_is_refused() -> None:
    data = load_dataset("digits")
    cfg = RunConfig(dataset="digits", n_fit=10_000, n_select=10_000)
    s = make_splits(data, cfg, 0)  # fit / select capped at a quarter / a tenth of the split
    assert len(s.y_fit) == len(data.y_train) // 4
    tiny = dataclasses.replace(data, x_train=data.x_train[:150], y_train=data.y_train[:150])
    with pytest.raises(ValueError, match=r"leaves .* for the classifier"):
        make_splits(tiny, cfg, 0)
