"""VQA pretraining: held-out views disjoint by content, early stop on validation, a bad call,
the user-cache key."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26.shared import rng_for
from icml26.syvla import data, evaluate, language, pretrain, steps
from icml26.syvla import model as model_module
from icml26.syvla import vqa as vqa_module
from icml26.syvla.config import RunConfig
from icml26.syvla.data import TextBank, VQASet, all_instructions, vqa_set
from icml26.syvla.evaluate import vqa_accuracy
from icml26.syvla.model import ModelConfig, SyVLA
from icml26.syvla.pretrain import VQAPretrainConfig, pretrain_vqa, vqa_splits
from icml26.syvla.vqa import question_texts


class _Encoder:
    dim = 384

    def encode(self, texts: list[str]) -> np.ndarray:
        rng = np.random.default_rng(len(texts))
        return rng.normal(size=(len(texts), 384)).astype(np.float32)


def test_training_views_never_equal_a_validation_or_test_view() -> None:
    train, val, test = vqa_splits(300, 60, 60, 13, seed=0)
    held = {v.tobytes() for v in np.concatenate([val.views, test.views])}
    assert len(train) > 200  # few collisions to drop, and the rooms are varied
    assert not any(v.tobytes() in held for v in train)
    assert len({v.tobytes() for v in train}) > 150


def test_pretraining_stops_on_a_validation_plateau_and_touches_only_the_vl_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch.manual_seed(0)
    bank = TextBank(_Encoder(), texts=all_instructions() + question_texts())  # type: ignore[arg-type]
    train, val, _ = vqa_splits(64, 32, 8, 13, seed=1)
    model = SyVLA(ModelConfig())
    before = [p.clone() for p in model.control_parameters()]
    # validation: rises, then two checks below best + min_delta (0.505 is a rise < 0.01)
    accs = iter([0.3, 0.5, 0.505, 0.49, 0.9])
    monkeypatch.setattr("icml26.syvla.pretrain.vqa_accuracy", lambda *_: next(accs))
    cfg = VQAPretrainConfig(max_steps=20, batch=8, check_every=2, patience=2, min_delta=0.01)
    res = pretrain_vqa(model, train, val, bank, cfg, seed=0)
    assert res.stopped == "plateau"
    assert res.steps == 8  # the fourth check ends it; the 0.9 is never seen
    assert [s for s, _ in res.curve] == [2, 4, 6, 8]
    assert (res.best_step, res.best_val) == (6, 0.505)  # best kept, though not a "rise"
    assert all(torch.equal(a, b) for a, b in zip(before, model.control_parameters(), strict=True))
    accs = iter([0.1, 0.2, 0.3])
    res = pretrain_vqa(
        model, train, val, bank, VQAPretrainConfig(max_steps=5, batch=8, check_every=2), seed=0
    )
    assert res.stopped == "max_steps"
    assert [s for s, _ in res.curve] == [2, 4, 5]
    accs = iter([0.1, 0.95])
    res = pretrain_vqa(
        model,
        train,
        val,
        bank,
        VQAPretrainConfig(max_steps=9, batch=8, check_every=2, target=0.9),
        seed=0,
    )
    assert (res.stopped, res.steps) == ("target", 4)
    with pytest.raises(ValueError, match="no training views"):
        pretrain_vqa(model, train[:0], val, bank, VQAPretrainConfig(), seed=0)
    with pytest.raises(ValueError, match="target"):
        VQAPretrainConfig(target=0)
    with pytest.raises(ValueError, match="patience"):
        VQAPretrainConfig(patience=0)
    with pytest.raises(ValueError, match="min_delta"):
        VQAPretrainConfig(min_delta=-0.1)


def test_pretraining_keeps_the_best_validation_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    bank = TextBank(_Encoder(), texts=all_instructions() + question_texts())  # type: ignore[arg-type]
    train, val, _ = vqa_splits(64, 32, 8, 13, seed=1)
    model = SyVLA(ModelConfig())
    accs = iter([0.4, 0.7, 0.5])  # the second check is the best
    seen: list[dict[str, torch.Tensor]] = []

    def fake_accuracy(m: SyVLA, *_: object) -> float:
        seen.append({k: v.clone() for k, v in m.state_dict().items()})
        return next(accs)

    monkeypatch.setattr("icml26.syvla.pretrain.vqa_accuracy", fake_accuracy)
    cfg = VQAPretrainConfig(max_steps=6, batch=8, check_every=2, patience=5)
    res = pretrain_vqa(model, train, val, bank, cfg, seed=0)
    assert res.best_step == 4
    assert res.best_val == 0.7
    final = model.state_dict()
    assert all(torch.equal(final[k], v) for k, v in seen[1].items())
    assert not all(torch.equal(final[k], v) for k, v in seen[2].items())


def _key_inputs(device: str = "cpu", encoder: object | None = None) -> tuple:
    cfg = RunConfig(device=device)
    torch.manual_seed(0)
    model = SyVLA(ModelConfig())
    bank = TextBank(encoder or _Encoder())  # type: ignore[arg-type]
    vqa = vqa_splits(20, 10, 10, 13, seed=0)
    return cfg, model, VQAPretrainConfig(), vqa, bank, 0


def test_pretrain_cache_key_covers_the_code_data_embeddings_and_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Everything that changes the pretrained weights changes the user-cache key."""
    names = {m.__name__ for m in steps.key_modules()}
    for needed in (pretrain, evaluate, data, model_module, vqa_module, language):
        assert needed.__name__ in names
    assert rng_for.__module__ in names  # the seeding helpers pretraining draws from
    assert vqa_set.__module__ in names
    assert vqa_accuracy.__module__ in names
    base = steps._pretrain_key(*_key_inputs())
    assert steps._pretrain_key(*_key_inputs()) == base  # deterministic
    assert steps._pretrain_key(*_key_inputs(device="cuda")) != base

    class _Other(_Encoder):
        def encode(self, texts: list[str]) -> np.ndarray:
            return super().encode(texts) + 1.0

    assert steps._pretrain_key(*_key_inputs(encoder=_Other())) != base
    cfg, model, settings, vqa, bank, seed = _key_inputs()
    assert steps._pretrain_key(cfg, model, settings, vqa, bank, 1) != base
    assert steps._pretrain_key(cfg, model, VQAPretrainConfig(lr=0.5), vqa, bank, seed) != base
    shifted = (vqa[0], VQASet(vqa[1].views, vqa[1].questions, vqa[1].answers[::-1].copy()), vqa[2])
    assert steps._pretrain_key(cfg, model, settings, shifted, bank, seed) != base
    original = steps._source
    for name in sorted(names):
        monkeypatch.setattr(
            steps, "_source", lambda m, n=name: original(m) + ("#" if m.__name__ == n else "")
        )
        assert steps._pretrain_key(*_key_inputs()) != base, name
