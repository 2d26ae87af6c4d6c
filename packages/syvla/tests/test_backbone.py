"""The VQA-pretrained backbone shipped in the wheel: it matches its provenance record and the
profiles that use it, it loads and answers as recorded; a run loads it only when its settings
match and its re-measured accuracy agrees; ``pretrained_backbone="train"`` retrains; the
``pretrain`` profile regenerates it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from icml26.shared import RunDir, Stages
from icml26.syvla import backbone, experiment, steps
from icml26.syvla.config import RunConfig
from icml26.syvla.data import TextBank
from icml26.syvla.evaluate import vqa_accuracy
from icml26.syvla.paper import PAPER


class _Encoder:
    """A stand-in sentence encoder (deterministic, no model download)."""

    dim = 384

    def encode(self, texts: list[str]) -> np.ndarray:
        rng = np.random.default_rng(len(texts))
        return rng.normal(size=(len(texts), 384)).astype(np.float32)


def _records() -> list[tuple[Path, dict]]:
    return [
        (p, json.loads(p.read_text(encoding="utf-8")))
        for p in sorted(backbone.SHIPPED_DIR.glob("*.json"))
    ]


def test_shipped_backbone_matches_its_record_the_profiles_and_the_held_out_figure() -> None:
    """The shipped file's hash is its record's; its key is the one ``quick`` and ``babyai``
    compute (so they load it); the weights load into the network and, measured again with the
    bundled encoder, answer the held-out questions as the record says (at least 0.8)."""
    records = _records()
    assert records, f"no shipped backbone in {backbone.SHIPPED_DIR}"
    path, record = records[0]
    weights = path.with_name(record["file"])
    assert backbone.file_sha256(weights) == record["sha256"]
    assert record["created"]["git"]["commit"]
    assert record["created"]["git"]["dirty"] is False
    assert "--profile pretrain" in record["created"]["command"]
    cfg = PAPER.profiles["quick"]
    assert isinstance(cfg, RunConfig)
    vqa = steps.vqa_data(cfg)
    model = steps.make_model(cfg, cfg.seed)
    key = backbone.shipped_key(
        model, steps.pretrain_settings(cfg), vqa, seed=cfg.seed, text_model=cfg.text_model
    )
    assert record["key"] == key
    babyai = PAPER.profiles["babyai"]
    assert babyai.seed == cfg.seed
    assert steps.pretrain_settings(babyai) == steps.pretrain_settings(cfg)
    model.load_state_dict(load_file(weights))  # strict: every parameter, no extra
    measured = vqa_accuracy(model, vqa[2], steps.text_bank(cfg))
    assert measured == pytest.approx(record["heldout_accuracy"], abs=backbone.VERIFY_TOLERANCE)
    assert measured >= 0.8


def test_shipped_key_follows_settings_and_data_not_code() -> None:
    cfg = RunConfig(vqa_train_states=40, vqa_val=10, vqa_eval=10)
    vqa, model = steps.vqa_data(cfg), steps.make_model(cfg, 0)
    settings = steps.pretrain_settings(cfg)
    base = backbone.shipped_key(model, settings, vqa, seed=0, text_model="bundled")
    assert backbone.shipped_key(model, settings, vqa, seed=0, text_model="bundled") == base
    assert backbone.shipped_key(model, settings, vqa, seed=1, text_model="bundled") != base
    assert backbone.shipped_key(model, settings, vqa, seed=0, text_model="other") != base
    lr = replace(settings, lr=0.5)
    assert backbone.shipped_key(model, lr, vqa, seed=0, text_model="bundled") != base
    other = steps.vqa_data(replace(cfg, vqa_eval=11))  # other held-out questions
    assert backbone.shipped_key(model, settings, other, seed=0, text_model="bundled") != base
    wide = steps.make_model(replace(cfg, hidden=32), 0)
    assert backbone.shipped_key(wide, settings, vqa, seed=0, text_model="bundled") != base


def test_pretrain_profile_writes_a_backbone_that_a_run_loads_verifies_or_retrains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    bank = TextBank(_Encoder())  # type: ignore[arg-type]
    monkeypatch.setattr(experiment, "text_bank", lambda _cfg: bank)
    tiny = replace(
        PAPER.profiles["pretrain"], vqa_train_states=60, vqa_val=20, vqa_eval=20, vqa_max_steps=3
    )
    assert tiny.pretrain_only
    assert tiny.pretrained_backbone == "train"
    pre = RunDir(tmp_path / "pre")
    pre.prepare(tiny)
    m = experiment.run(tiny, pre)
    assert m["pretrain.from_shipped"] == 0
    assert m["vqa_pretrain_steps"] == 3
    assert m["vqa_pretrain_cpu_s"] > 0
    folder = pre.path / "backbone"
    record = json.loads((folder / "vqa-seed0.json").read_text())
    assert record["heldout_accuracy"] == m["vqa_pretrained"]
    assert record["training"]["steps"] == 3
    assert record["settings"]["vqa_eval"] == 20
    monkeypatch.setattr(backbone, "SHIPPED_DIR", folder)

    def pretrained(cfg: RunConfig, name: str) -> tuple[dict[str, torch.Tensor], dict]:
        model, info = steps.pretrain_backbone(
            cfg, Stages(tmp_path / name), bank, steps.vqa_data(cfg), cfg.seed
        )
        return model.state_dict(), info

    run = replace(tiny, pretrain_only=False, pretrained_backbone="shipped")
    state, info = pretrained(run, "shipped")
    shipped = load_file(folder / "vqa-seed0.safetensors")
    assert info["from_shipped"]
    assert info["shipped_file"] == "vqa-seed0.safetensors"
    assert all(torch.equal(state[k], v) for k, v in shipped.items())
    assert info["heldout_accuracy"] == record["heldout_accuracy"]  # measured by the run
    # other settings: no shipped backbone matches, the run pretrains
    _, other = pretrained(replace(run, vqa_lr=1e-3), "other")
    assert not other["from_shipped"]
    assert other["steps"] == 3
    # "train" forces pretraining even where a shipped backbone matches
    trained_state, forced = pretrained(replace(run, pretrained_backbone="train"), "train")
    assert not forced["from_shipped"]
    # a record whose held-out figure the weights do not reproduce is rejected: pretrain
    record["heldout_accuracy"] += 0.5
    (folder / "vqa-seed0.json").write_text(json.dumps(record))
    state, rejected = pretrained(run, "rejected")
    assert not rejected["from_shipped"]
    assert rejected["shipped_rejected"] == "vqa-seed0.safetensors"
    assert all(torch.equal(state[k], v) for k, v in trained_state.items())  # from the init
    # weights that differ from the record's hash: a clear error
    (folder / "vqa-seed0.safetensors").write_bytes(b"not the weights")
    with pytest.raises(ValueError, match="differs from its record"):
        pretrained(run, "corrupt")
