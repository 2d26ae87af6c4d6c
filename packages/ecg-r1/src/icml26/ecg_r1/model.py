"""The modality-decoupled model: two frozen encoders, one projector each into the language
model's embedding space, a causal language decoder; and Interleaved Modality Dropout.

:class:`ECGR1ForCausalLM` is a Hugging Face ``LlamaForCausalLM`` (the tiny Llama and
SmolLM2 are both Llamas) with the projectors as submodules, so TRL's ``GRPOTrainer``,
``generate``, ``save_pretrained`` and ``from_pretrained`` work on it unchanged.

A prompt holds one placeholder token per modality embedding (``<sig>`` x k, ``<img>`` x k,
k = the encoder's tokens plus, unless ``readout=False``, one read-out token made from the
encoder's label and feature heads) and the record's index in the attached
:class:`EncodedBank`, written with the digit tokens ``<r0>`` ... ``<r9>``. The forward pass
replaces the placeholders' input embeddings by that record's projected encoder outputs (the
LLaVA-style "prefix embeddings") and the digits' by zeros, so the index reaches no layer: two
prompts that differ only in the index of the same encoded record give the same logits (a test
holds this). A missing modality is a prompt without its placeholders, so the same model reads
signal + image, signal only or image only, in either order. The placeholder and digit tokens
are masked out of the logits: an answer never contains them.

:class:`ModalityDropout` draws, per training example, which modalities the prompt carries:
with probability ``p_drop`` (0.5 in the official code) one of the two, chosen uniformly, is
dropped; when both are kept, their order is swapped with probability ``p_swap`` (0.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

__all__ = [
    "CONDITIONS",
    "CONFIGS",
    "RECORD_DIGITS",
    "ECGR1ForCausalLM",
    "ECGR1LMConfig",
    "EncodedBank",
    "ModalityDropout",
]

#: Prompt layouts: which modalities, in which order.
CONFIGS: tuple[str, ...] = ("signal+image", "image+signal", "signal", "image")
#: Evaluation conditions of the issue -> prompt layout.
CONDITIONS: dict[str, str] = {
    "both": "signal+image",
    "signal_only": "signal",
    "image_only": "image",
}
SIG, IMG = "<sig>", "<img>"
#: The tokens that write a record's index in the bank (embedded as zeros).
RECORD_DIGITS: tuple[str, ...] = tuple(f"<r{d}>" for d in range(10))
#: Digits of the record index in a prompt (zero-padded, so every prompt has the same length).
RECORD_WIDTH = 5
PROMPT = "Interpret this 12-lead ECG step by step. "


@dataclass(frozen=True)
class ModalityDropout:
    """Interleaved Modality Dropout (module docstring). ``p_drop = p_swap = 0``: none."""

    p_drop: float = 0.5
    p_swap: float = 0.1

    def __post_init__(self) -> None:
        for name in ("p_drop", "p_swap"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v}")

    def sample(self, rng: np.random.Generator, n: int) -> list[str]:
        """``n`` prompt layouts (members of :data:`CONFIGS`)."""
        drop = rng.random(n) < self.p_drop
        which = rng.random(n) < 0.5
        swap = rng.random(n) < self.p_swap
        return [
            ("signal" if w else "image") if d else ("image+signal" if s else "signal+image")
            for d, w, s in zip(drop, which, swap, strict=True)
        ]


@dataclass
class EncodedBank:
    """Frozen encoder outputs of a dataset (computed once): tokens and read-outs per modality.

    Attributes:
        sig_tokens: the signal encoder's tokens, ``(N, n_tokens, width)``.
        sig_read: its read-out per record (label probabilities, then features).
        img_tokens: the image encoder's tokens, ``(N, n_tokens, width)``.
        img_read: its read-out per record.
    """

    sig_tokens: torch.Tensor
    sig_read: torch.Tensor
    img_tokens: torch.Tensor
    img_read: torch.Tensor

    def __len__(self) -> int:
        return self.sig_tokens.shape[0]

    @classmethod
    @torch.no_grad()
    def build(
        cls,
        sig_enc: nn.Module,
        img_enc: nn.Module,
        signals: np.ndarray,
        images: np.ndarray,
        *,
        batch: int = 256,
        device: str = "cpu",
    ) -> EncodedBank:
        """Encode ``signals`` (B, 12, 1000) and ``images`` (B, H, W) uint8 with the frozen
        encoders, ``batch`` records at a time."""
        st, sr, it, ir = [], [], [], []
        for a in range(0, len(signals), batch):
            s = sig_enc(torch.as_tensor(signals[a : a + batch], device=device))
            i = img_enc(torch.as_tensor(images[a : a + batch], device=device).float() / 255)
            st.append(s.tokens)
            sr.append(s.readout)
            it.append(i.tokens)
            ir.append(i.readout)
        return cls(torch.cat(st), torch.cat(sr), torch.cat(it), torch.cat(ir))


class ECGR1LMConfig(LlamaConfig):
    """A Llama config plus the projector sizes and the special token ids.

    Args:
        sig_width, img_width: encoder token widths; read_dim: read-out width.
        n_sig, n_img: encoder tokens per modality.
        readout: add the read-out token (the frozen encoder's label and feature heads).
        sig_id, img_id: placeholder token ids; digit_ids: ids of :data:`RECORD_DIGITS`.
    """

    model_type = "ecg_r1_llama"

    def __init__(
        self,
        sig_width: int = 64,
        img_width: int = 64,
        read_dim: int = 1,
        n_sig: int = 8,
        n_img: int = 8,
        readout: bool = True,
        sig_id: int = 0,
        img_id: int = 0,
        digit_ids: list[int] | None = None,
        **kwargs: Any,
    ) -> None:
        self.sig_width, self.img_width, self.read_dim = sig_width, img_width, read_dim
        self.n_sig, self.n_img, self.readout = n_sig, n_img, readout
        self.sig_id, self.img_id = sig_id, img_id
        self.digit_ids = list(digit_ids or [])
        super().__init__(**kwargs)
        # No remote code: the class is registered with the Auto classes below (TRL reads
        # ``auto_map`` when it reloads the KL reference).
        self.auto_map = getattr(self, "auto_map", None) or {}


def _projector(d_in: int, d: int) -> nn.Module:
    return nn.Sequential(nn.Linear(d_in, d), nn.GELU(), nn.Linear(d, d))


class ECGR1ForCausalLM(LlamaForCausalLM):
    """The decoder with the modality projectors (the encoders stay outside, frozen: see
    :class:`EncodedBank`; attach one with :meth:`use_bank`).

    Build one from a causal LM and its tokenizer with :meth:`from_lm`; save and reload it
    with ``save_pretrained`` / ``AutoModelForCausalLM.from_pretrained`` (the bank is data, not
    saved: attach it again).

    Args:
        config: the decoder's configuration with the projectors' sizes.
    """

    config_class = ECGR1LMConfig

    def __init__(self, config: ECGR1LMConfig) -> None:
        super().__init__(config)
        d = config.hidden_size
        self.sig_proj, self.img_proj = (
            _projector(config.sig_width, d),
            _projector(config.img_width, d),
        )
        self.sig_read, self.img_read = (
            _projector(config.read_dim, d),
            _projector(config.read_dim, d),
        )
        self.bank: EncodedBank | None = None
        self.post_init()

    @classmethod
    def from_lm(
        cls,
        lm: Any,
        tokenizer: Any,
        *,
        sig_width: int,
        img_width: int,
        read_dim: int,
        n_sig: int,
        n_img: int,
        readout: bool = True,
    ) -> ECGR1ForCausalLM:
        """The model on ``lm``'s weights (a ``LlamaForCausalLM``) with fresh projectors.

        Raises:
            ValueError: ``lm`` is not a Llama, or the tokenizer lacks the placeholder or
                digit tokens.
        """
        if not isinstance(lm, LlamaForCausalLM):
            raise ValueError(f"ECG-R1 builds on a LlamaForCausalLM, got {type(lm).__name__}")
        ids = tokenizer.convert_tokens_to_ids([SIG, IMG, *RECORD_DIGITS])
        if tokenizer.unk_token_id in ids or None in ids:
            raise ValueError(f"the tokenizer needs {SIG}, {IMG} and {RECORD_DIGITS} as tokens")
        config = ECGR1LMConfig(
            sig_width=sig_width,
            img_width=img_width,
            read_dim=read_dim,
            n_sig=n_sig,
            n_img=n_img,
            readout=readout,
            sig_id=ids[0],
            img_id=ids[1],
            digit_ids=ids[2:],
            **{
                k: v
                for k, v in lm.config.to_dict().items()
                if k not in ("model_type", "architectures")
            },
        )
        config.architectures = [cls.__name__]
        model = cls(config).to(lm.dtype)
        missing, unexpected = model.load_state_dict(lm.state_dict(), strict=False)
        if unexpected or any(not k.startswith(("sig_", "img_")) for k in missing):
            raise ValueError(f"weights do not fit: missing {missing}, unexpected {unexpected}")
        return model.to(lm.device)

    # ---------------------------------------------------------------------------- prompts
    @property
    def n_sig_tokens(self) -> int:
        return self.config.n_sig + int(self.config.readout)

    @property
    def n_img_tokens(self) -> int:
        return self.config.n_img + int(self.config.readout)

    def user_text(self, layout: str, record: int) -> str:
        """The user turn for ``record`` (its index in the bank) in ``layout``."""
        if layout not in CONFIGS:
            raise ValueError(f"unknown prompt layout {layout!r}; one of {CONFIGS}")
        if not 0 <= record < 10**RECORD_WIDTH:
            raise ValueError(f"record index must be in [0, {10**RECORD_WIDTH}), got {record}")
        parts = {"signal": SIG * self.n_sig_tokens, "image": IMG * self.n_img_tokens}
        digits = "".join(RECORD_DIGITS[int(d)] for d in f"{int(record):0{RECORD_WIDTH}d}")
        return PROMPT + "".join(parts[m] for m in layout.split("+")) + digits

    def use_bank(self, bank: EncodedBank) -> ECGR1ForCausalLM:
        """Attach the encoded records that prompts index; returns ``self``."""
        self.bank = bank
        return self

    # ---------------------------------------------------------------------------- forward
    def _records(self, ids: torch.Tensor) -> list[int]:
        digits = torch.tensor(self.config.digit_ids, device=ids.device)
        out = []
        for row in ids:
            d = row[torch.isin(row, digits)]
            if len(d) == 0:
                raise ValueError("a prompt with modality placeholders names no record (<r0>..<r9>)")
            value = "".join(str(self.config.digit_ids.index(int(t))) for t in d)
            out.append(int(value))
        return out

    def modality_embeddings(self, records: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, n_sig_tokens, d) and (B, n_img_tokens, d) projected embeddings of ``records``."""
        if self.bank is None:
            raise RuntimeError("no encoded records attached: call model.use_bank(bank) first")
        n = len(self.bank)
        if any(not 0 <= r < n for r in records):
            raise ValueError(f"record indices {records} outside the attached bank of {n}")
        idx, dev = torch.as_tensor(records), self.device
        b = self.bank
        s = [self.sig_proj(b.sig_tokens[idx].to(dev))]
        i = [self.img_proj(b.img_tokens[idx].to(dev))]
        if self.config.readout:
            s.append(self.sig_read(b.sig_read[idx].to(dev))[:, None])
            i.append(self.img_read(b.img_read[idx].to(dev))[:, None])
        return torch.cat(s, 1), torch.cat(i, 1)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Token embeddings of ``ids`` with the placeholders replaced, row by row, by that
        row's record's modality embeddings and the record digits by zeros."""
        emb = self.get_input_embeddings()(ids)
        cfg = self.config
        digits = torch.isin(ids, torch.tensor(cfg.digit_ids, device=ids.device))
        holders = (ids == cfg.sig_id) | (ids == cfg.img_id)
        if not holders.any():
            return emb.masked_fill(digits.unsqueeze(-1), 0.0)
        rows = holders.any(1)
        sig, img = self.modality_embeddings(self._records(ids[rows]))
        for tok_id, vecs, k in (
            (cfg.sig_id, sig, self.n_sig_tokens),
            (cfg.img_id, img, self.n_img_tokens),
        ):
            mask = ids[rows] == tok_id
            has = mask.any(1)
            counts = mask.sum(1)
            if not torch.all(counts[has] == k):
                raise ValueError(
                    f"a prompt row has {counts[has].tolist()} placeholders, expected {k}"
                )
            if not has.any():
                continue
            full = torch.zeros_like(ids, dtype=torch.bool)
            full[rows] = mask
            emb = emb.masked_scatter(
                full.unsqueeze(-1), vecs[has].to(emb.dtype).reshape(-1, emb.shape[-1])
            )
        return emb.masked_fill(digits.unsqueeze(-1), 0.0)

    def forward(  # type: ignore[override]
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        past_key_values: Any = None,
        inputs_embeds: torch.Tensor | None = None,
        **kwargs: Any,
    ) -> Any:
        """``LlamaForCausalLM.forward`` on the embeddings of :meth:`embed`. Without a cache
        and without ``position_ids``, positions count the attended tokens (left padding starts
        at 0, as generation does); the placeholder and digit logits are masked out."""
        cache = kwargs.get("cache", past_key_values)
        fresh = cache is None or cache.get_seq_length() == 0
        if past_key_values is not None:
            kwargs["past_key_values"] = past_key_values
        if input_ids is not None and inputs_embeds is None:
            inputs_embeds = self.embed(input_ids)
            own_positions = position_ids is None and attention_mask is not None and fresh
            if own_positions and attention_mask.shape == input_ids.shape:
                position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)
        out = super().forward(
            inputs_embeds=inputs_embeds,
            attention_mask=attention_mask,
            position_ids=position_ids,
            **kwargs,
        )
        banned = [self.config.sig_id, self.config.img_id, *self.config.digit_ids]
        out.logits = out.logits.index_fill(-1, torch.tensor(banned, device=out.logits.device), -1e9)
        return out

    # --------------------------------------------------------------------------- helpers
    def prompt_ids(self, tokenizer: Any, layout: str, record: int) -> list[int]:
        """The chat-templated prompt ids (generation prompt added); the template is rendered
        once per tokenizer and layout, the record digits substituted."""
        key = (id(tokenizer), layout)
        cache = self.__dict__.setdefault("_prompt_cache", {})
        if key not in cache:
            out = tokenizer.apply_chat_template(
                [{"role": "user", "content": self.user_text(layout, 0)}],
                add_generation_prompt=True,
                tokenize=True,
                return_dict=True,
            )
            cache[key] = list(out["input_ids"])
        self.user_text(layout, record)  # validates
        ids = list(cache[key])
        where = [i for i, t in enumerate(ids) if t in self.config.digit_ids]
        for i, d in zip(where, f"{int(record):0{RECORD_WIDTH}d}", strict=True):
            ids[i] = self.config.digit_ids[int(d)]
        return ids

    @torch.no_grad()
    def interpret(
        self,
        tokenizer: Any,
        records: list[int],
        layouts: list[str],
        *,
        max_new_tokens: int,
        batch_size: int = 64,
    ) -> list[str]:
        """Greedy interpretations of ``records`` of the attached bank, one per layout,
        decoded with the special tokens kept (``<think>``, labels)."""
        texts: list[str] = []
        pad = (
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        )
        self.eval()
        for a in range(0, len(records), batch_size):
            rows = [
                self.prompt_ids(tokenizer, c, r)
                for r, c in zip(
                    records[a : a + batch_size], layouts[a : a + batch_size], strict=True
                )
            ]
            width = max(len(r) for r in rows)
            ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=self.device)
            attn = torch.tensor(
                [[0] * (width - len(r)) + [1] * len(r) for r in rows], device=self.device
            )
            out = self.generate(
                input_ids=ids,
                attention_mask=attn,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=pad,
                eos_token_id=tokenizer.eos_token_id,
            )
            for row in out[:, width:].tolist():
                cut = (
                    row.index(tokenizer.eos_token_id) if tokenizer.eos_token_id in row else len(row)
                )
                texts.append(tokenizer.decode(row[:cut], skip_special_tokens=False))
        return texts


AutoConfig.register(ECGR1LMConfig.model_type, ECGR1LMConfig, exist_ok=True)
AutoModelForCausalLM.register(ECGR1LMConfig, ECGR1ForCausalLM, exist_ok=True)
