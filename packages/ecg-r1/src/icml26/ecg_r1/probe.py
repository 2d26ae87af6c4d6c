"""A probe of the checkpoint stage's SFT: does it teach a checkpoint the protocol's format?

``python -m icml26.ecg_r1.probe --markup text`` (or ``special``) simulates records, measures
the training records' features (the SFT targets), pretrains the encoders briefly, fine-tunes
the checkpoint with LoRA on the protocol answers, then reports on held-out records:

* the answers' token lengths (p95) and the generation cap (1.25x p95), as the study sets it;
* the teacher-forced mean log-probability of the held-out reference answers' tokens, split
  into the markup and label tokens (``<think>``, ``</think>``, ``<answer>``, ``</answer>``,
  the label names) and the rest, before and after SFT: a markup that stays improbable
  explains answers without ``<think>``;
* greedy answers (signal + image) at the cap: format rate, truncation rate (answers that do
  not end right after ``</answer>``), and their token lengths.

It runs one thread in about five CPU-minutes on SmolLM2-135M (the defaults).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from icml26.ecg_r1.data import make_dataset
from icml26.ecg_r1.labels import LABELS
from icml26.ecg_r1.methods import (
    PolicySettings,
    frozen_encoders,
    generation_cap,
    measured_targets,
    new_policy,
    sft_targets,
    train_encoders,
)
from icml26.ecg_r1.model import PROMPT, EncodedBank, ModalityDropout
from icml26.ecg_r1.protocol import parse_interpretation, protocol_answer
from icml26.ecg_r1.render import ImageRasteriser
from icml26.ecg_r1.train import SFTSettings, answer_ids, train_sft
from icml26.shared import log, rng_for

__all__ = ["ProbeSettings", "format_probe", "markup_spans"]

_MARKUP = re.compile(r"</?think>|</?answer>|" + "|".join(sorted(LABELS, key=len, reverse=True)))


@dataclass(frozen=True)
class ProbeSettings:
    """The probe's sizes (defaults: the ``full`` profile's SmolLM2 stage, fewer records).

    Attributes:
        model: the checkpoint (a :func:`icml26.shared.llm.load_causal_lm` spec).
        markup: :class:`~icml26.ecg_r1.methods.PolicySettings`' ``markup``.
        n_train: simulated training records (their measured features are the SFT targets).
        n_test: held-out records answered greedily and scored.
        sft_steps, sft_batch, sft_lr: the SFT.
        enc_steps: encoder pretraining steps.
        seed: every random stream's seed.
    """

    model: str = "smollm2-135m-instruct-q4_1"
    markup: str = "text"
    n_train: int = 64
    n_test: int = 4
    sft_steps: int = 30
    sft_batch: int = 4
    sft_lr: float = 1e-3
    enc_steps: int = 30
    seed: int = 0

    def __post_init__(self) -> None:
        if min(self.n_train, self.n_test, self.sft_batch, self.enc_steps) < 1 or self.sft_steps < 0:
            raise ValueError(f"need positive sizes and sft_steps >= 0, got {self}")


def markup_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the markup tags and label names in an answer."""
    return [m.span() for m in _MARKUP.finditer(text)]


def _token_logprobs(
    model: Any, tok: Any, answers: list[str], bank_rows: list[int]
) -> dict[str, float]:
    """Mean log-probability of the answers' markup tokens and of the others (teacher forced)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    rows = answer_ids(base, tok, answers)
    sums: dict[str, list[float]] = {"markup": [], "other": []}
    for text, toks, r in zip(answers, rows, bank_rows, strict=True):
        spans = markup_spans(text)
        ends = [len(tok.decode(toks[: k + 1], skip_special_tokens=False)) for k in range(len(toks))]
        starts = [0, *ends[:-1]]
        prompt = base.prompt_ids(tok, "signal+image", r)
        x = torch.tensor([prompt + toks])
        with torch.no_grad():
            lp = torch.log_softmax(
                model(input_ids=x, attention_mask=torch.ones_like(x)).logits[0].float(), -1
            )
        for k, t in enumerate(toks):
            v = float(lp[len(prompt) - 1 + k, t])
            if starts[k] >= len(text):  # the end-of-turn token
                continue
            hit = any(a < ends[k] and starts[k] < b for a, b in spans)
            sums["markup" if hit else "other"].append(v)
    return {k: float(np.mean(v)) if v else float("nan") for k, v in sums.items()}


def format_probe(settings: ProbeSettings) -> dict[str, Any]:
    """Run the probe (module docstring).

    Args:
        settings: the probe's sizes and the markup.

    Returns:
        The figures (lengths, cap, log-probabilities, losses, rates, CPU seconds) and the
        greedy answers.
    """
    t0 = time.process_time()
    s = settings
    raster = ImageRasteriser(200.0, 10.0)
    train = make_dataset(s.n_train, rng_for(s.seed, "probe-train"), rasteriser=raster)
    test = make_dataset(s.n_test, rng_for(s.seed, "probe-test"), rasteriser=raster)
    targets = measured_targets(train.raw, train.fs)
    enc = train_encoders(train, steps=s.enc_steps, batch_size=32, lr=3e-3, seed=s.seed)
    se, ie = frozen_encoders(enc, "cpu")
    btr, bte = (EncodedBank.build(se, ie, d.signals, d.images) for d in (train, test))
    model, tok = new_policy(
        PolicySettings(s.model, markup=s.markup),
        [PROMPT] + [protocol_answer(f) for f in targets if f is not None],
        btr,
        seed=s.seed,
    )
    per_record = sft_targets(model, tok, targets)
    lengths = [len(x) for x in per_record if x is not None]
    cap, p95 = generation_cap(lengths, floor=16)
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    refs = [protocol_answer(f) for f in test.features]  # the true features' answers
    base.use_bank(bte)
    before = _token_logprobs(model, tok, refs, list(range(s.n_test)))
    log(f"ecg-r1 probe: p95 {p95:.0f}, cap {cap}, log-probabilities before SFT {before}")
    t_sft = time.process_time()
    losses = train_sft(
        model,
        tok,
        btr,
        per_record,
        SFTSettings(s.sft_steps, s.sft_batch, s.sft_lr),
        dropout=ModalityDropout(),
        rng=rng_for(s.seed, "probe-sft"),
    )
    t_sft = time.process_time() - t_sft
    log(f"ecg-r1 probe: SFT {s.sft_steps} steps, {t_sft:.0f} CPU-s, loss {losses[-1]:.3f}")
    base.use_bank(bte)
    after = _token_logprobs(model, tok, refs, list(range(s.n_test)))
    t_gen = time.process_time()
    texts = base.interpret(
        tok, list(range(s.n_test)), ["signal+image"] * s.n_test, max_new_tokens=cap
    )
    t_gen = time.process_time() - t_gen
    parsed = [parse_interpretation(t) for t in texts]
    out_len = [len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]
    return {
        "settings": asdict(s),
        "sft_targets": len(lengths),
        "answer_tokens_p95": p95,
        "answer_tokens_max": max(lengths),
        "generation_cap": cap,
        "logprob_before": before,
        "logprob_after": after,
        "sft_loss_first": losses[0] if losses else None,
        "sft_loss_last5": float(np.mean(losses[-5:])) if losses else None,
        "format_rate": float(np.mean([p.well_formed for p in parsed])),
        "truncation_rate": float(np.mean([not t.rstrip().endswith("</answer>") for t in texts])),
        "output_tokens": out_len,
        "cpu_s": {"sft": t_sft, "generate": t_gen, "total": time.process_time() - t0},
        "texts": texts,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """``python -m icml26.ecg_r1.probe [--markup text|special] [--sft-steps N] ...``: the
    probe's JSON on stdout."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    d = ProbeSettings()
    for name, value in asdict(d).items():
        ap.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    args = vars(ap.parse_args(argv))
    torch.set_num_threads(1)
    out = format_probe(ProbeSettings(**args))
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
