"""``icml26 run ecg-r1``: data, delineation checks, encoders and baselines, the LLM methods,
metrics and plots.

Stages (each saved in the run folder, so a killed run resumes after its last finished stage):

1. ``data``: the wave-model corpus (train, test) with images, cached as ``.npz``;
2. ``delineation``: features measured on the test records (the ``rules`` baseline and
   ``feature_error.<f>.sim``), the neurokit2 ECGSYN subset (``feature_error.<f>.neurokit``),
   the real pyhrv ECG (``feature_error.<f>.real``);
3. ``encoders``: both encoders pretrained, then frozen; the ``signal_cnn`` baseline;
4. the language-model methods, each SFT (then GRPO) from the same initial weights:
   ``sft_only`` (protocol answers, modality dropout), ``ecg_r1`` (``sft_only`` + GRPO with the
   evidence rewards), ``no_dropout`` (SFT + GRPO without modality dropout), ``free_text``
   (SFT on free-text answers, dropout);
5. metrics, paired z statistics for the claims, plots.

Every stage draws from its own generator seeded by ``(seed, stage)``.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from icml26.ecg_r1.config import ECGR1Config
from icml26.ecg_r1.labels import LABELS
from icml26.shared import PALETTE, RunDir, figure, log, seed_everything

__all__ = ["METHODS", "run"]

METHODS = ("ecg_r1", "no_dropout", "sft_only", "free_text", "signal_cnn", "rules")
LLM_METHODS = ("ecg_r1", "no_dropout", "sft_only", "free_text")
#: Markup and modality tokens, then every label as one token: a small decoder that must spell
#: ``first_degree_av_block`` from sub-words garbles it; as one token it is one choice.
SPECIAL = ["<think>", "</think>", "<answer>", "</answer>", "<sig>", "<img>", *LABELS]


def _rng(seed: int, stage: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(stage.encode())])


def _device(cfg: ECGR1Config) -> str:
    import torch

    from icml26.shared.devices import check_torch_device

    if cfg.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    check_torch_device(cfg.device)
    return cfg.device


def _stage(run_dir: RunDir, name: str) -> dict[str, Any] | None:
    p = run_dir.path / f"stage_{name}.json"
    return json.loads(p.read_text()) if p.exists() else None


def _data(cfg: ECGR1Config, run_dir: RunDir) -> tuple[Any, Any]:
    from icml26.ecg_r1.data import ECGDataset, make_dataset
    from icml26.ecg_r1.render import ImageRasteriser

    paths = run_dir.path / "data_train.npz", run_dir.path / "data_test.npz"
    if all(p.exists() for p in paths):
        return ECGDataset.load(paths[0]), ECGDataset.load(paths[1])
    raster = ImageRasteriser(200.0, 10.0)
    train = make_dataset(cfg.n_train, _rng(cfg.seed, "train"), rasteriser=raster)
    test = make_dataset(cfg.n_test, _rng(cfg.seed, "test"), rasteriser=raster)
    for d, p in zip((train, test), paths, strict=True):
        with run_dir.artefact(p.name) as tmp:
            d.save(tmp)
            if not str(tmp).endswith(".npz"):
                Path(str(tmp) + ".npz").replace(tmp)
    return train, test


def _delineation(cfg: ECGR1Config, run_dir: RunDir, test: Any) -> dict[str, Any]:
    done = _stage(run_dir, "delineation")
    if done is not None:
        return done
    from icml26.ecg_r1.baselines import rules_interpretations
    from icml26.ecg_r1.delineate import real_ecg_check
    from icml26.ecg_r1.labels import FEATURE_NAMES
    from icml26.ecg_r1.nk_validation import validate_neurokit

    texts, feats = rules_interpretations(test.raw, test.fs)
    metrics: dict[str, float] = {}
    for k in FEATURE_NAMES:
        errs = [abs(float(getattr(m, k)) - float(getattr(t, k))) for m, t in zip(feats, test.features, strict=True) if m is not None]  # fmt: skip
        if k == "axis":
            errs = [min(e, 360 - e) for e in errs]
        metrics[f"feature_error.{k}.sim"] = float(np.median(errs))
    metrics["delineation_failures.sim"] = float(sum(m is None for m in feats))
    if cfg.n_neurokit:
        nk = validate_neurokit(cfg.n_neurokit, _rng(cfg.seed, "neurokit"))
        for k, v in nk.items():
            metrics[f"feature_error.{k}.neurokit"] = float(np.median(np.abs(v)))
    real = real_ecg_check()
    metrics["feature_error.hr.real"] = real.hr_error
    metrics["feature_error.rr_cv.real"] = real.rr_cv_error
    metrics["real_beats_matched_frac"] = real.matched_frac
    out = {"texts": texts, "metrics": metrics, "real_reference": real.reference}
    run_dir.write_json("stage_delineation.json", out)
    return out


def _tokenizer_corpus(train: Any) -> list[str]:
    from icml26.ecg_r1.model import PROMPT
    from icml26.ecg_r1.protocol import free_text_answer, protocol_answer

    rng = np.random.default_rng(0)
    return [PROMPT] + [protocol_answer(f) for f in train.features] + [free_text_answer(f, rng) for f in train.features]  # fmt: skip


def _new_model(cfg: ECGR1Config, corpus: list[str], bank: Any, device: str, lm_spec: str | None = None) -> Any:  # fmt: skip
    """The multimodal model on the tiny LM or on a checkpoint (``lm_spec``, default ``cfg.lm``)."""
    import torch

    from icml26.ecg_r1.model import ECGR1Model

    torch.manual_seed(cfg.seed)
    spec = cfg.lm if lm_spec is None else lm_spec
    if spec == "tiny":
        from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm

        lm, tok = make_tiny_lm(
            corpus, special_tokens=SPECIAL, vocab_size=cfg.vocab_size, seed=cfg.seed,
            config=TinyModelConfig(hidden_size=cfg.lm_hidden, intermediate_size=2 * cfg.lm_hidden,
                                   num_layers=cfg.lm_layers, num_heads=4, num_kv_heads=2, max_positions=384),
        )  # fmt: skip
    else:
        from icml26.shared.llm import load_causal_lm
        from icml26.shared.llm.chat_templates import with_generation_markers
        from icml26.shared.llm.sft import add_lora

        lm, tok = load_causal_lm(spec)  # type: ignore[assignment]  # a tokenizer either way
        tok.add_special_tokens({"additional_special_tokens": SPECIAL})
        lm.resize_token_embeddings(len(tok))
        with_generation_markers(tok)
        special_ids = tok.convert_tokens_to_ids(SPECIAL)
        assert isinstance(special_ids, list)
        lm = add_lora(lm, rank=8, new_token_ids=special_ids)
    model = ECGR1Model(lm, tok, sig_width=bank.sig_tokens.shape[-1], img_width=bank.img_tokens.shape[-1],
                       read_dim=bank.sig_read.shape[-1], n_sig=bank.sig_tokens.shape[1], n_img=bank.img_tokens.shape[1])  # fmt: skip
    return model.to(device)


def _interpret(model: Any, bank: Any, n: int, max_tokens: int) -> dict[str, list[str]]:
    import torch

    from icml26.ecg_r1.model import CONDITIONS

    out = {}
    for cond, layout in CONDITIONS.items():
        comps, _ = model.generate(bank, torch.arange(n), [layout] * n, max_new_tokens=max_tokens)
        out[cond] = [model.decode(c) for c in comps]
    return out


def _grpo_settings(cfg: ECGR1Config, steps: int, prompts: int, generations: int) -> Any:
    """The shared GRPO knobs (DAPO loss, clip 0.2 / 0.28, dynamic sampling) at a given size."""
    from icml26.shared.llm.grpo import GRPOSettings

    return GRPOSettings(
        steps=steps, prompts_per_step=prompts, num_generations=generations,
        max_completion_length=cfg.grpo_max_tokens, lr=cfg.grpo_lr, temperature=cfg.grpo_temperature, epsilon=0.2,
        epsilon_high=0.28, loss_type="dapo", dynamic_sampling=True, reward_weights=cfg.reward_weights, seed=cfg.seed,
    )  # fmt: skip


def _llm_methods(cfg: ECGR1Config, run_dir: RunDir, train: Any, test: Any, banks: tuple[Any, Any], device: str) -> dict[str, Any]:  # fmt: skip
    import torch

    from icml26.ecg_r1.model import ModalityDropout
    from icml26.ecg_r1.protocol import free_text_answer, protocol_answer
    from icml26.ecg_r1.train import answer_ids, train_grpo, train_sft

    btr, bte = banks
    corpus = _tokenizer_corpus(train)
    dropout, none = ModalityDropout(cfg.p_drop, cfg.p_swap), ModalityDropout(0.0, 0.0)
    settings = _grpo_settings(cfg, cfg.grpo_steps, cfg.grpo_prompts, cfg.grpo_generations)
    results: dict[str, Any] = {}
    plans = [
        ("sft_only", "protocol", dropout, None),
        ("ecg_r1", None, dropout, "sft_only"),
        ("no_dropout", "protocol", none, "grpo"),
        ("free_text", "free_text", dropout, None),
    ]
    for name, answers_kind, drop, then in plans:
        done = _stage(run_dir, name)
        if done is not None:
            results[name] = done
            continue
        log(f"ecg-r1: {name}")
        model = _new_model(cfg, corpus, btr, device)
        entry: dict[str, Any] = {}
        if answers_kind is not None:
            ftr = np.random.default_rng([cfg.seed, 7])
            texts = [protocol_answer(f) for f in train.features] if answers_kind == "protocol" else [free_text_answer(f, ftr) for f in train.features]  # fmt: skip
            losses = train_sft(model, btr, answer_ids(model, texts), steps=cfg.sft_steps, batch_size=cfg.sft_batch,
                               lr=cfg.sft_lr, dropout=drop, rng=_rng(cfg.seed, f"sft-{name}"))  # fmt: skip
            entry["sft_loss_first"], entry["sft_loss_last"] = losses[0], float(np.mean(losses[-5:]))
            if name == "sft_only":
                torch.save(model.state_dict(), run_dir.path / "model_sft_only.pt")
        if then == "sft_only":
            model.load_state_dict(torch.load(run_dir.path / "model_sft_only.pt", weights_only=True))
        if then is not None and cfg.grpo_steps:
            glog = train_grpo(model, btr, train.features, settings, dropout=drop,
                              rng=_rng(cfg.seed, f"grpo-{name}"), weights=cfg.reward_weights)  # fmt: skip
            entry["grpo_reward"] = glog.reward
            entry["grpo_kept_frac"] = glog.kept_frac
            entry["grpo_components"] = glog.components
        entry["texts"] = _interpret(model, bte, len(test), cfg.grpo_max_tokens)
        if name == "ecg_r1":
            torch.save(model.state_dict(), run_dir.path / "model_ecg_r1.pt")
        run_dir.write_json(f"stage_{name}.json", entry)
        results[name] = entry
    return results


def _checkpoint_ecg_r1(cfg: ECGR1Config, run_dir: RunDir, train: Any, banks: tuple[Any, Any], device: str) -> dict[str, Any] | None:  # fmt: skip
    """ECG-R1 on a real checkpoint (``cfg.llm_model``, LoRA): protocol SFT with modality
    dropout, then GRPO with the evidence rewards, interpreted on the first ``llm_test`` test
    records. The tiny-model methods decide the claims; this stage is reported without one."""
    if not cfg.llm_model:
        return None
    done = _stage(run_dir, "ecg_r1_llm")
    if done is not None:
        return done
    import time

    from icml26.ecg_r1.model import ModalityDropout
    from icml26.ecg_r1.protocol import protocol_answer
    from icml26.ecg_r1.train import answer_ids, train_grpo, train_sft

    log(f"ecg-r1: ecg_r1 on {cfg.llm_model} (LoRA)")
    btr, bte = banks
    t0 = time.perf_counter()
    model = _new_model(cfg, _tokenizer_corpus(train), btr, device, lm_spec=cfg.llm_model)
    dropout = ModalityDropout(cfg.p_drop, cfg.p_swap)
    entry: dict[str, Any] = {"load_seconds": time.perf_counter() - t0}
    t0 = time.perf_counter()
    answers = answer_ids(model, [protocol_answer(f) for f in train.features])
    losses = train_sft(model, btr, answers, steps=cfg.llm_sft_steps, batch_size=cfg.llm_sft_batch,
                       lr=cfg.llm_sft_lr, dropout=dropout, rng=_rng(cfg.seed, "sft-ecg_r1_llm"))  # fmt: skip
    entry["sft_seconds"] = time.perf_counter() - t0
    if losses:
        entry["sft_loss_first"], entry["sft_loss_last"] = losses[0], float(np.mean(losses[-5:]))
    entry["answer_tokens"] = float(np.mean([len(a) for a in answers]))
    if cfg.llm_grpo_steps:
        settings = _grpo_settings(cfg, cfg.llm_grpo_steps, cfg.llm_grpo_prompts, cfg.llm_grpo_generations)  # fmt: skip
        t0 = time.perf_counter()
        glog = train_grpo(model, btr, train.features, settings, dropout=dropout,
                          rng=_rng(cfg.seed, "grpo-ecg_r1_llm"), weights=cfg.reward_weights)  # fmt: skip
        entry["grpo_seconds"] = time.perf_counter() - t0
        entry["grpo_reward"] = glog.reward
        entry["grpo_kept_frac"] = glog.kept_frac
    t0 = time.perf_counter()
    entry["texts"] = _interpret(model, bte, cfg.llm_test, cfg.grpo_max_tokens)
    entry["eval_seconds"] = time.perf_counter() - t0
    run_dir.write_json("stage_ecg_r1_llm.json", entry)
    return entry


def _interpret_user(cfg: ECGR1Config, run_dir: RunDir, train: Any, encoders: tuple[Any, Any], device: str) -> None:  # fmt: skip
    """The trained ECG-R1 on the user's record (``records``): its first 10 s resampled to
    200 Hz, drawn, encoded, interpreted; written with the delineated features to
    ``user_interpretations.json``."""
    import torch

    from icml26.ecg_r1.data import to_model_signal
    from icml26.ecg_r1.delineate import measure_features
    from icml26.ecg_r1.model import CONDITIONS, EncodedBank
    from icml26.ecg_r1.records import load_record
    from icml26.ecg_r1.render import ImageRasteriser

    x, fs = load_record(cfg.records, cfg.records_fs or None)
    n = round(10 * fs)
    if x.shape[1] < n:
        x = np.pad(x, ((0, 0), (0, n - x.shape[1])), mode="edge")
    t_old = np.arange(n) / fs
    x200 = np.stack([np.interp(np.arange(2000) / 200.0, t_old, lead[:n]) for lead in x])[
        None
    ].astype(np.float32)
    image = (ImageRasteriser(200.0)(x200) * 255).astype(np.uint8)
    bank = EncodedBank.build(*encoders, to_model_signal(x200, 200.0), image, device=device)
    model = _new_model(cfg, _tokenizer_corpus(train), bank, device)
    model.load_state_dict(torch.load(run_dir.path / "model_ecg_r1.pt", weights_only=True))
    texts = {c: model.decode(model.generate(bank, torch.arange(1), [layout], max_new_tokens=cfg.grpo_max_tokens)[0][0])
             for c, layout in CONDITIONS.items()}  # fmt: skip
    feats = measure_features(x200[0], 200.0).as_dict()
    run_dir.write_json(
        "user_interpretations.json",
        {"record": cfg.records, "interpretation": texts, "measured_features": feats},
    )


def run(cfg: ECGR1Config, run_dir: RunDir) -> dict[str, Any]:
    import torch

    from icml26.ecg_r1.baselines import signal_cnn_interpretations
    from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder, pretrain_encoder
    from icml26.ecg_r1.evaluate import paired_z, score_method
    from icml26.ecg_r1.model import EncodedBank

    torch.set_num_threads(1) if torch.get_num_threads() > 1 and cfg.device == "cpu" else None
    seed_everything(cfg.seed)
    device = _device(cfg)
    run_dir.update_env(device=device)
    train, test = _data(cfg, run_dir)
    log(f"ecg-r1: {len(train)} train / {len(test)} test records")
    deline = _delineation(cfg, run_dir, test)
    # Encoders (pretrained once; saved so a resumed run reuses them).
    torch.manual_seed(cfg.seed)
    se, ie = SignalEncoder(), ImageEncoder()
    enc_path = run_dir.path / "encoders.pt"
    if enc_path.exists():
        state = torch.load(enc_path, weights_only=True)
        se.load_state_dict(state["signal"]), ie.load_state_dict(state["image"])
    else:
        rng = _rng(cfg.seed, "encoders")
        pretrain_encoder(se, train.signals, train.label_matrix, train.targets, steps=cfg.enc_steps, batch_size=cfg.enc_batch, lr=cfg.enc_lr, rng=rng, device=device)  # fmt: skip
        pretrain_encoder(ie, train.images, train.label_matrix, train.targets, steps=cfg.enc_steps, batch_size=cfg.enc_batch, lr=cfg.enc_lr, rng=rng, scale=1 / 255, device=device)  # fmt: skip
        torch.save({"signal": se.state_dict(), "image": ie.state_dict()}, enc_path)
    se, ie = se.to(device).eval(), ie.to(device).eval()
    for p in [*se.parameters(), *ie.parameters()]:
        p.requires_grad_(False)
    btr = EncodedBank.build(se, ie, train.signals, train.images, device=device)
    bte = EncodedBank.build(se, ie, test.signals, test.images, device=device)
    cnn_texts = signal_cnn_interpretations(se, test.signals) if device == "cpu" else signal_cnn_interpretations(se.cpu(), test.signals)  # fmt: skip
    llm = _llm_methods(cfg, run_dir, train, test, (btr, bte), device)

    texts: dict[str, dict[str, list[str]]] = {m: llm[m]["texts"] for m in LLM_METHODS}
    texts["signal_cnn"] = {"both": cnn_texts, "signal_only": cnn_texts}
    texts["rules"] = {"both": deline["texts"], "signal_only": deline["texts"]}
    scores = {m: score_method(texts[m], test.features) for m in METHODS}
    metrics: dict[str, Any] = dict(deline["metrics"])
    for m in METHODS:
        metrics.update(scores[m].metrics(m))
    r1, nd, so, ft = scores["ecg_r1"], scores["no_dropout"], scores["sft_only"], scores["free_text"]
    metrics["z.hallucination_sft_only_minus_ecg_r1"] = paired_z(
        so.halluc_per_record, r1.halluc_per_record
    )
    for single in ("signal_only", "image_only"):
        gap_r1 = r1.jaccard["both"] - r1.jaccard[single]
        gap_nd = nd.jaccard["both"] - nd.jaccard[single]
        metrics[f"z.gap_{single}_no_dropout_minus_ecg_r1"] = paired_z(gap_nd, gap_r1)
    assert r1.consistency is not None
    assert nd.consistency is not None
    metrics["z.consistency_ecg_r1_minus_no_dropout"] = paired_z(r1.consistency, nd.consistency)
    metrics["z.evidence_sft_only_minus_free_text"] = paired_z(so.evidence, ft.evidence)
    for m in ("ecg_r1", "no_dropout"):
        if llm[m].get("grpo_reward"):
            metrics[f"grpo_reward_first.{m}"] = float(np.mean(llm[m]["grpo_reward"][:2]))
            metrics[f"grpo_reward_last.{m}"] = float(np.mean(llm[m]["grpo_reward"][-2:]))
    big = _checkpoint_ecg_r1(cfg, run_dir, train, (btr, bte), device)
    if big is not None:
        metrics.update(
            score_method(big["texts"], test.features[: cfg.llm_test]).metrics("ecg_r1_llm")
        )
        for k in ("sft_loss_first", "sft_loss_last", "answer_tokens"):
            if k in big:
                metrics[f"{k}.ecg_r1_llm"] = float(big[k])
        for k in ("load", "sft", "grpo", "eval"):
            if f"{k}_seconds" in big:
                metrics[f"seconds.{k}.ecg_r1_llm"] = float(big[f"{k}_seconds"])
        if big.get("grpo_reward"):
            metrics["grpo_reward_first.ecg_r1_llm"] = float(np.mean(big["grpo_reward"][:2]))
            metrics["grpo_reward_last.ecg_r1_llm"] = float(np.mean(big["grpo_reward"][-2:]))
    if cfg.records:
        _interpret_user(cfg, run_dir, train, (se, ie), device)
    _plots(run_dir, metrics, test, texts["ecg_r1"]["both"][0])
    return metrics


def _plots(run_dir: RunDir, m: dict[str, Any], test: Any, interpretation: str) -> None:
    import matplotlib.image as mpimg

    from icml26.ecg_r1.render import render_ecg

    fig = render_ecg(
        test.raw[0], test.fs, title="true: " + ", ".join(sorted(test.labels[0])), dpi=110
    )
    tmp = run_dir.plot_path("_ecg_tmp")
    fig.savefig(tmp)
    img = mpimg.imread(tmp)
    tmp.unlink()
    with figure(run_dir.plot_path("ecg_interpretation"), 2, 1, width=10, height=8.5, gridspec_kw={"height_ratios": [3, 2]}) as (_, axes):  # fmt: skip
        axes[0].imshow(img)
        axes[0].set_axis_off()
        axes[1].set_axis_off()
        axes[1].text(0, 1, "ECG-R1 (tiny LM) interpretation:\n" + interpretation.replace("</think>", "</think>\n"),
                     va="top", ha="left", fontsize=7, family="monospace", wrap=True)  # fmt: skip
    conds = ("both", "signal_only", "image_only")
    with figure(run_dir.plot_path("jaccard_by_condition"), width=8, height=3.4) as (_, ax):
        w = 0.8 / len(METHODS)
        for j, meth in enumerate(METHODS):
            vals = [m.get(f"diagnosis_jaccard.{c}.{meth}", np.nan) for c in conds]
            ax.bar(np.arange(3) + j * w, vals, w, label=meth, color=PALETTE[j % len(PALETTE)])
        ax.set_xticks(np.arange(3) + 0.4 - w / 2, conds)
        ax.set_ylabel("diagnosis Jaccard")
        ax.legend(fontsize=7, ncol=3)
    with figure(run_dir.plot_path("hallucination_rate"), width=6, height=3.2) as (_, ax):
        vals = [m[f"hallucination_rate.{meth}"] for meth in METHODS]
        ax.bar(METHODS, vals, color=[PALETTE[j % len(PALETTE)] for j in range(len(METHODS))])
        ax.set_ylabel("contradicting statements / statements")
        ax.tick_params(axis="x", labelsize=7)
