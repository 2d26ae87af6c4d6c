"""The study's steps: encoders, SFT targets from measured features, the language-model
methods (SFT, then GRPO) and their interpretations.

* :func:`measured_targets`: every training record delineated (:func:`~delineate.measure_features`);
  the protocol SFT targets cite these *measured* features, with the delineator's real errors
  (records it cannot delineate get no target), so SFT does not start at the evidence reward's
  optimum: GRPO's evidence reward scores the simulator's true features and has errors to fix.
* :func:`train_encoders`: both encoders pretrained on the 13 labels and the simulator's true
  features (not the measured ones), then frozen. Their label and feature heads reach the
  language model as one read-out token per modality (``readout=False`` drops it: the
  ablation).
* :func:`run_llm_method`: one :class:`MethodSpec` (answers, dropout, GRPO or not, read-out),
  from the same initial weights per seed; returns the interpretations per condition.
* :func:`save_policy`: a trained policy (LoRA adapters merged on a checkpoint), its
  tokenizer and encoders as one folder that :func:`~report.interpret_record` loads.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26.ecg_r1.config import RunConfig
from icml26.ecg_r1.data import ECGDataset
from icml26.ecg_r1.delineate import DelineationError, measure_features
from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder, pretrain_encoder, save_encoders
from icml26.ecg_r1.labels import LABELS, Features
from icml26.ecg_r1.model import (
    CONDITIONS,
    PROMPT,
    RECORD_DIGITS,
    ECGR1ForCausalLM,
    EncodedBank,
    ModalityDropout,
)
from icml26.ecg_r1.protocol import free_text_answer, protocol_answer
from icml26.ecg_r1.train import SFTSettings, answer_ids, train_grpo, train_sft
from icml26.shared import log, rng_for
from icml26.shared.llm.grpo import GRPOSettings

__all__ = [
    "PLACEHOLDERS",
    "SPECIAL",
    "MethodInputs",
    "MethodSpec",
    "PolicySettings",
    "generation_cap",
    "measured_targets",
    "method_inputs",
    "new_policy",
    "run_llm_method",
    "save_policy",
    "sft_targets",
    "train_encoders",
]

#: The modality placeholders and record digits: new tokens on every tokenizer (their input
#: embeddings are replaced by the record's modality embeddings or zeros, their logits masked:
#: they carry nothing to learn).
PLACEHOLDERS = ["<sig>", "<img>", *RECORD_DIGITS]
#: The tiny tokenizer's special tokens: markup, placeholders, digits, then every label as one
#: token (a small decoder trained from scratch that must spell ``first_degree_av_block`` from
#: sub-words garbles it; as one token it is one choice).
SPECIAL = ["<think>", "</think>", "<answer>", "</answer>", *PLACEHOLDERS, *LABELS]


def measured_targets(raw: np.ndarray, fs: float) -> list[Features | None]:
    """The delineator's features of each record: the features SFT targets should cite.

    Args:
        raw: records, shape ``(n, 12, samples)`` in mV, leads in :data:`~labels.LEADS` order.
        fs: their sampling rate in Hz.

    Returns:
        One :class:`~labels.Features` per record, ``None`` where the delineator fails
        (:class:`~delineate.DelineationError`); such a record gets no SFT target.
    """
    out: list[Features | None] = []
    for rec in raw:
        try:
            out.append(measure_features(rec, fs))
        except DelineationError:
            out.append(None)
    return out


def train_encoders(
    train: ECGDataset, *, steps: int, batch_size: int, lr: float, seed: int, device: str = "cpu"
) -> dict[str, torch.Tensor]:
    """Both encoders pretrained on ``train`` (labels + the simulator's true features); their
    state dicts flattened as ``signal.*`` and ``image.*`` (a :data:`~icml26.shared.TORCH`
    stage value)."""
    torch.manual_seed(seed)
    se, ie = SignalEncoder(), ImageEncoder()
    rng = rng_for(seed, "encoders")
    kw = {"steps": steps, "batch_size": batch_size, "lr": lr, "rng": rng, "device": device}
    pretrain_encoder(se, train.signals, train.label_matrix, train.targets, **kw)
    pretrain_encoder(ie, train.images, train.label_matrix, train.targets, scale=1 / 255, **kw)
    return {f"signal.{k}": v.cpu() for k, v in se.state_dict().items()} | {
        f"image.{k}": v.cpu() for k, v in ie.state_dict().items()
    }


def frozen_encoders(
    state: dict[str, torch.Tensor], device: str
) -> tuple[SignalEncoder, ImageEncoder]:
    """The encoders of :func:`train_encoders`' state, in eval mode, without gradients."""
    se, ie = SignalEncoder(), ImageEncoder()
    se.load_state_dict({k[7:]: v for k, v in state.items() if k.startswith("signal.")})
    ie.load_state_dict({k[6:]: v for k, v in state.items() if k.startswith("image.")})
    for enc in (se, ie):
        enc.to(device).eval().requires_grad_(False)
    return se, ie


@dataclass(frozen=True)
class PolicySettings:
    """The language model of :func:`new_policy`.

    Args:
        lm: ``"tiny"`` (a Llama trained from scratch, of the sizes below) or a causal-LM spec
            for :func:`icml26.shared.llm.load_causal_lm` (a hub name, a folder,
            ``smollm2-135m-instruct-q4_1``), then trained with LoRA.
        hidden: the tiny Llama's hidden size (intermediate size ``2 * hidden``).
        layers: the tiny Llama's layers.
        vocab_size: the tiny tokenizer's vocabulary, trained on the corpus.
        lora_rank: the LoRA rank on a checkpoint (ignored for ``"tiny"``).
        markup: on a checkpoint, how the answer's markup (``<think>``, ``<answer>``, their
            closing tags) and the label names are tokenised: ``"text"`` (default) by the
            checkpoint's own vocabulary, so their embeddings are pretrained; ``"special"``: as
            new special tokens whose embedding rows train through peft's trainable tokens
            (the old way: on SmolLM2 those rows start at log-probability about -20 and 30 SFT
            steps did not lift them, so no answer opened ``<think>``; README, Limits).
            The tiny model always uses special tokens (:data:`SPECIAL`).
    """

    lm: str = "tiny"
    hidden: int = 96
    layers: int = 2
    vocab_size: int = 600
    lora_rank: int = 8
    markup: str = "text"

    def __post_init__(self) -> None:
        if self.markup not in ("text", "special"):
            raise ValueError(f"markup must be 'text' or 'special', got {self.markup!r}")


def new_policy(
    settings: PolicySettings,
    corpus: list[str],
    bank: EncodedBank,
    *,
    seed: int,
    readout: bool = True,
) -> tuple[Any, Any]:
    """A fresh :class:`ECGR1ForCausalLM` and its tokenizer, sized to ``bank``'s encoders.

    Args:
        settings: the language model (:class:`PolicySettings`).
        corpus: answer texts the tiny tokenizer is trained on (unused for a checkpoint).
        bank: the encoded records (:class:`EncodedBank`); fixes the projector widths.
        seed: seeds the initial weights.
        readout: whether the encoders' read-out token of label probabilities is used.

    Returns:
        ``(model, tokenizer)``; on a checkpoint the model carries LoRA adapters and trains
        the modality projectors in full.
    """
    torch.manual_seed(seed)
    widths = {
        "sig_width": bank.sig_tokens.shape[-1],
        "img_width": bank.img_tokens.shape[-1],
        "read_dim": bank.sig_read.shape[-1],
        "n_sig": bank.sig_tokens.shape[1],
        "n_img": bank.img_tokens.shape[1],
        "readout": readout,
    }
    if settings.lm == "tiny":
        from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm

        h = settings.hidden
        config = TinyModelConfig(
            hidden_size=h,
            intermediate_size=2 * h,
            num_layers=settings.layers,
            num_heads=4,
            num_kv_heads=2,
            max_positions=512,
        )
        lm, tok = make_tiny_lm(
            corpus, special_tokens=SPECIAL, vocab_size=settings.vocab_size, seed=seed, config=config
        )
        return ECGR1ForCausalLM.from_lm(lm, tok, **widths), tok
    from icml26.shared.llm import load_causal_lm
    from icml26.shared.llm.chat_templates import with_generation_markers
    from icml26.shared.llm.sft import add_lora

    lm, tok = load_causal_lm(settings.lm)
    new = PLACEHOLDERS if settings.markup == "text" else SPECIAL
    tok.add_special_tokens({"additional_special_tokens": new})
    lm.resize_token_embeddings(len(tok))
    with_generation_markers(tok)
    model = ECGR1ForCausalLM.from_lm(lm, tok, **widths)
    # Only tokens the answers contain need trainable rows: none with text markup.
    ids = tok.convert_tokens_to_ids(SPECIAL) if settings.markup == "special" else []
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    model = add_lora(model, rank=settings.lora_rank, new_token_ids=ids, targets=targets)
    for name, p in model.named_parameters():  # the projectors train in full
        if any(f".{k}." in name for k in ("sig_proj", "img_proj", "sig_read", "img_read")):
            p.requires_grad_(True)
    return model, tok


def sft_targets(
    model: Any, tokenizer: Any, features: list[Features | None], write: Any = protocol_answer
) -> list[list[int] | None]:
    """The SFT target (assistant token ids) of each record, written from its features.

    Args:
        model: the policy of :func:`new_policy` (its chat format wraps the answer).
        tokenizer: its tokenizer.
        features: per record, the features the answer cites: measured ones
            (:func:`measured_targets`) or annotated ones, ``None`` for no target.
        write: features -> answer text (:func:`~protocol.protocol_answer` by default).

    Returns:
        Per record the answer's token ids, or ``None`` where ``features`` had ``None``.
    """
    texts = [None if f is None else write(f) for f in features]
    ids = iter(answer_ids(model, tokenizer, [t for t in texts if t is not None]))
    return [None if t is None else next(ids) for t in texts]


def generation_cap(lengths: list[int], floor: int) -> tuple[int, float]:
    """A generation cap at 1.25x the 95th percentile of the answer lengths (tokens) and at
    least ``floor``; returns ``(cap, p95)``."""
    p95 = float(np.percentile(lengths, 95))
    return max(floor, math.ceil(1.25 * p95)), p95


@dataclass(frozen=True)
class MethodSpec:
    """One language-model method: SFT on ``answers`` (``"protocol"`` from measured features,
    ``"free_text"``), modality ``dropout`` or none, then ``grpo`` or not; ``readout``: the
    encoders' read-out token."""

    name: str
    answers: str = "protocol"
    dropout: bool = True
    grpo: bool = False
    readout: bool = True


@dataclass(frozen=True)
class MethodInputs:
    """What every language-model method trains and is evaluated on.

    Attributes:
        policy, sft, grpo: the model and its two training phases.
        drop: the modality dropout of methods that use it.
        train: the training records; targets: their measured features (SFT targets).
        banks: the encoded training and test records.
        n_eval: test records interpreted; max_new_tokens: see :func:`run_llm_method`.
    """

    policy: PolicySettings
    sft: SFTSettings
    grpo: GRPOSettings | None
    drop: ModalityDropout
    train: ECGDataset
    targets: list[Features | None]
    banks: tuple[EncodedBank, EncodedBank]
    n_eval: int
    max_new_tokens: int = 0


def method_inputs(
    cfg: RunConfig,
    train: ECGDataset,
    targets: list[Features | None],
    banks: tuple[EncodedBank, EncodedBank],
    n_eval: int,
    *,
    checkpoint: bool = False,
) -> MethodInputs:
    """The run config's :class:`MethodInputs`: the tiny-model study, or (``checkpoint``) the
    ``llm_*`` run on ``cfg.llm_model`` with LoRA.

    GRPO at the stable setting: DAPO loss, clip 0.2 / 0.28, dynamic sampling, KL ``grpo_beta``
    to the SFT model (0 on the LoRA checkpoint: TRL's reference for a peft model is the
    adapter-free model, which keeps the projectors but is the pre-SFT decoder, not the SFT
    model)."""
    grpo = GRPOSettings(
        steps=cfg.llm_grpo_steps if checkpoint else cfg.grpo_steps,
        prompts_per_step=cfg.llm_grpo_prompts if checkpoint else cfg.grpo_prompts,
        num_generations=cfg.llm_grpo_generations if checkpoint else cfg.grpo_generations,
        lr=cfg.grpo_lr,
        beta=0.0 if checkpoint else cfg.grpo_beta,
        temperature=cfg.grpo_temperature,
        epsilon=0.2,
        epsilon_high=0.28,
        loss_type="dapo",
        dynamic_sampling=True,
        reward_weights=cfg.reward_weights,
        seed=cfg.seed,
    )
    if checkpoint:
        policy = PolicySettings(cfg.llm_model)
        sft = SFTSettings(cfg.llm_sft_steps, cfg.llm_sft_batch, cfg.llm_sft_lr)
    else:
        policy = PolicySettings(cfg.lm, cfg.lm_hidden, cfg.lm_layers, cfg.vocab_size)
        sft = SFTSettings(cfg.sft_steps, cfg.sft_batch, cfg.sft_lr)
    drop = ModalityDropout(cfg.p_drop, cfg.p_swap)
    return MethodInputs(policy, sft, grpo, drop, train, targets, banks, n_eval, cfg.max_new_tokens)


def run_llm_method(
    spec: MethodSpec, inputs: MethodInputs, *, seed: int, save_to: Path | None = None
) -> dict[str, Any]:
    """SFT (then GRPO) of one method; the SFT and (with GRPO) the final interpretations of
    the first ``n_eval`` test records in the three conditions, losses and GRPO's log.

    ``grpo`` is :class:`GRPOSettings` without ``max_completion_length`` decided: the cap is
    :func:`generation_cap` of the SFT answers' lengths, also used for evaluation
    (``max_new_tokens > 0`` lowers it: smoke tests only)."""
    policy, sft, grpo, drop = inputs.policy, inputs.sft, inputs.grpo, inputs.drop
    train, targets, n_eval, max_new_tokens = (
        inputs.train,
        inputs.targets,
        inputs.n_eval,
        inputs.max_new_tokens,
    )
    btr, bte = inputs.banks
    ftr = rng_for(seed, f"free-text-{spec.name}")
    write = protocol_answer if spec.answers == "protocol" else (lambda f: free_text_answer(f, ftr))
    corpus = [PROMPT] + [write(m) for m in targets if m is not None]
    model, tok = new_policy(policy, corpus, btr, seed=seed, readout=spec.readout)
    per_record = sft_targets(model, tok, targets, write)
    ids = [x for x in per_record if x is not None]
    cap, p95 = generation_cap([len(x) for x in ids], floor=16)
    if max_new_tokens and max_new_tokens < p95:
        log(
            f"ecg-r1: {spec.name}: max_new_tokens={max_new_tokens} caps generation below the "
            f"answers' p95 ({p95:.0f} tokens): outputs are truncated (smoke runs only)"
        )
    cap = min(cap, max_new_tokens) if max_new_tokens else cap
    dropout = drop if spec.dropout else ModalityDropout(0.0, 0.0)
    losses = train_sft(
        model, tok, btr, per_record, sft, dropout=dropout, rng=rng_for(seed, f"sft-{spec.name}")
    )
    out: dict[str, Any] = {"answer_tokens_p95": p95, "generation_cap": cap, "sft_targets": len(ids)}
    if losses:
        out["sft_loss_first"], out["sft_loss_last"] = losses[0], float(np.mean(losses[-5:]))
    out["texts_sft"] = interpret_conditions(model, tok, bte, n_eval, cap)
    if spec.grpo and grpo is not None and grpo.steps:
        settings = GRPOSettings(**{**grpo.__dict__, "max_completion_length": cap, "seed": seed})
        history = train_grpo(
            model,
            tok,
            btr,
            train.features,
            settings,
            dropout=dropout,
            rng=rng_for(seed, f"grpo-{spec.name}"),
        )
        out["grpo"] = {
            k: [h.get(k) for h in history]
            for k in (
                "reward",
                "kl",
                "rewards/evidence/mean",
                "rewards/diagnosis/mean",
                "dynamic_sampling/kept_frac",
                "completions/clipped_ratio",
            )
        }
        out["texts"] = interpret_conditions(model, tok, bte, n_eval, cap)
    else:
        out["texts"] = out["texts_sft"]
    if save_to is not None:
        save_policy(save_to, model, tok)
        torch.save(model.state_dict(), save_to.with_suffix(".pt"))
    return out


def save_policy(
    folder: str | Path,
    model: Any,
    tokenizer: Any,
    encoders: tuple[SignalEncoder, ImageEncoder] | None = None,
) -> Path:
    """Save a policy as a folder :func:`~icml26.ecg_r1.report.interpret_record` loads.

    On a checkpoint (:func:`new_policy` wraps it with LoRA) ``model.save_pretrained`` would
    write the adapters alone: no ``config.json``, and not the modality projectors, which
    train in full outside the adapters. Here a copy of the model has its adapters merged
    into the weights (peft's ``merge_and_unload``), so the folder holds one plain
    :class:`~icml26.ecg_r1.model.ECGR1ForCausalLM` (config, decoder with the adapters merged,
    projectors); ``model`` itself keeps its adapters. The tiny model is saved as it is.

    Args:
        folder: the folder to write (created if missing).
        model: the policy (:class:`~icml26.ecg_r1.model.ECGR1ForCausalLM`, or a peft model
            around one).
        tokenizer: its tokenizer, saved beside it.
        encoders: the frozen ``(signal, image)`` encoders, saved as ``encoders.safetensors``
            (:func:`~icml26.ecg_r1.encoders.save_encoders`) so the folder interprets a record
            alone; ``None`` saves none.

    Returns:
        The folder.

    Raises:
        TypeError: ``model`` (or the model under its adapters) is not an
            :class:`~icml26.ecg_r1.model.ECGR1ForCausalLM`.
    """
    path = Path(folder)
    plain = model
    if hasattr(model, "merge_and_unload"):  # a peft model: merge the adapters into a copy
        base = model.get_base_model()
        bank, base.bank = getattr(base, "bank", None), None  # data, not copied nor saved
        try:
            plain = copy.deepcopy(model).merge_and_unload()
        finally:
            base.bank = bank
    if not isinstance(plain, ECGR1ForCausalLM):
        raise TypeError(f"save_policy saves an ECGR1ForCausalLM, got {type(plain).__name__}")
    path.mkdir(parents=True, exist_ok=True)
    plain.save_pretrained(path)
    tokenizer.save_pretrained(path)
    if encoders is not None:
        save_encoders(path, *encoders)
    return path


def interpret_conditions(
    model: Any, tok: Any, bank: EncodedBank, n: int, cap: int
) -> dict[str, list[str]]:
    """Greedy interpretations of the first ``n`` records of ``bank`` in each condition."""
    model.use_bank(bank)
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    base.use_bank(bank)
    return {
        cond: base.interpret(tok, list(range(n)), [layout] * n, max_new_tokens=cap)
        for cond, layout in CONDITIONS.items()
    }
