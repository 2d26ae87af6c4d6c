"""The modality-decoupled model: two frozen encoders, one projector each into the language
model's embedding space, a causal language decoder; and Interleaved Modality Dropout.

A prompt holds one placeholder token per modality embedding (``<sig>`` x k, ``<img>`` x k,
k = the encoder's tokens plus one read-out token made from its heads); the decoder's input
embeddings at those positions are replaced by the projected encoder outputs (the LLaVA-style
"prefix embeddings"). A missing modality is a prompt without its placeholders, so the same
model reads signal + image, signal only or image only, in either order.

:class:`ModalityDropout` draws, per training example, which modalities the prompt carries:
with probability ``p_drop`` (0.5 in the official code) one of the two, chosen uniformly, is
dropped; when both are kept, their order is swapped with probability ``p_swap`` (0.1).

Generation (:meth:`ECGR1Model.generate`) is a plain sampling loop on the decoder's key/value
cache from ``inputs_embeds``, returning each sampled token's log-probability under the
policy, which is what GRPO's rollouts need (TRL's ``GRPOTrainer`` feeds token ids only, so it
cannot carry the ECG embeddings; a test holds these log-probabilities to the training
forward pass).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = [
    "CONDITIONS",
    "CONFIGS",
    "ECGR1Model",
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
    """Frozen encoder outputs of a dataset (computed once): tokens and read-outs per modality."""

    sig_tokens: torch.Tensor
    sig_read: torch.Tensor
    img_tokens: torch.Tensor
    img_read: torch.Tensor

    def __len__(self) -> int:
        return self.sig_tokens.shape[0]

    @classmethod
    @torch.no_grad()
    def build(cls, sig_enc: nn.Module, img_enc: nn.Module, signals: np.ndarray, images: np.ndarray, *, batch: int = 256, device: str = "cpu") -> EncodedBank:  # fmt: skip
        st, sr, it, ir = [], [], [], []
        for a in range(0, len(signals), batch):
            s = sig_enc(torch.as_tensor(signals[a : a + batch], device=device))
            i = img_enc(torch.as_tensor(images[a : a + batch], device=device).float() / 255)
            st.append(s.tokens)
            sr.append(s.readout)
            it.append(i.tokens)
            ir.append(i.readout)
        return cls(torch.cat(st), torch.cat(sr), torch.cat(it), torch.cat(ir))


def _projector(d_in: int, d: int) -> nn.Module:
    return nn.Sequential(nn.Linear(d_in, d), nn.GELU(), nn.Linear(d, d))


class ECGR1Model(nn.Module):
    """Projectors + language decoder (the encoders stay outside, frozen: see
    :class:`EncodedBank`).

    Args:
        lm: a Hugging Face causal LM (the tiny Llama, or SmolLM2 with LoRA).
        tokenizer: its tokenizer, with ``<sig>`` and ``<img>`` as special tokens.
        sig_width, img_width: encoder token widths; ``read_dim``: read-out width.
        n_sig, n_img: encoder tokens per modality (one read-out token is added to each).
    """

    def __init__(self, lm: Any, tokenizer: Any, *, sig_width: int, img_width: int, read_dim: int, n_sig: int, n_img: int) -> None:  # fmt: skip
        super().__init__()
        self.lm, self.tokenizer = lm, tokenizer
        d = lm.get_input_embeddings().weight.shape[1]
        self.sig_proj, self.img_proj = _projector(sig_width, d), _projector(img_width, d)
        self.sig_read, self.img_read = _projector(read_dim, d), _projector(read_dim, d)
        self.n_sig, self.n_img = n_sig + 1, n_img + 1
        ids = tokenizer.convert_tokens_to_ids([SIG, IMG])
        if tokenizer.unk_token_id in ids:
            raise ValueError("the tokenizer needs <sig> and <img> as special tokens")
        self.sig_id, self.img_id = ids
        self.eos_id = tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_id
        self._prompts = {c: self._prompt_ids(c) for c in CONFIGS}

    # ---------------------------------------------------------------------------- prompts
    def user_text(self, config: str) -> str:
        parts = {"signal": SIG * self.n_sig, "image": IMG * self.n_img}
        return PROMPT + "".join(parts[m] for m in config.split("+"))

    def _prompt_ids(self, config: str) -> list[int]:
        out = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": self.user_text(config)}],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
        )
        return list(out["input_ids"])

    def prompt_ids(self, config: str) -> list[int]:
        if config not in self._prompts:
            raise ValueError(f"unknown prompt layout {config!r}; one of {CONFIGS}")
        return self._prompts[config]

    # ---------------------------------------------------------------------------- forward
    @property
    def device(self) -> torch.device:
        return self.lm.get_input_embeddings().weight.device

    def modality_embeddings(self, bank: EncodedBank, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        """(B, n_sig, d) and (B, n_img, d) projected embeddings of records ``idx``."""
        dev = self.device
        s = torch.cat([self.sig_proj(bank.sig_tokens[idx].to(dev)), self.sig_read(bank.sig_read[idx].to(dev))[:, None]], 1)  # fmt: skip
        i = torch.cat([self.img_proj(bank.img_tokens[idx].to(dev)), self.img_read(bank.img_read[idx].to(dev))[:, None]], 1)  # fmt: skip
        return s, i

    def embed(self, ids: torch.Tensor, sig: torch.Tensor, img: torch.Tensor) -> torch.Tensor:
        """Token embeddings of ``ids`` with the placeholders replaced, row by row, by that
        row's modality embeddings (a row without a modality's placeholders skips it)."""
        emb = self.lm.get_input_embeddings()(ids)
        for tok_id, vecs, k in ((self.sig_id, sig, self.n_sig), (self.img_id, img, self.n_img)):
            mask = ids == tok_id
            rows = mask.any(1)
            if not rows.any():
                continue
            counts = mask.sum(1)
            if not torch.all(counts[rows] == k):
                raise ValueError(
                    f"a prompt row has {counts[rows].tolist()} placeholders, expected {k}"
                )
            emb = emb.masked_scatter(
                mask.unsqueeze(-1), vecs[rows].to(emb.dtype).reshape(-1, emb.shape[-1])
            )
        return emb

    def assemble(self, configs: list[str], completions: list[list[int]] | None = None) -> dict[str, torch.Tensor]:  # fmt: skip
        """Left-padded ``prompt + completion`` rows: ids, attention mask, position ids, and a
        mask of the completion tokens."""
        comps = completions or [[] for _ in configs]
        rows = [self.prompt_ids(c) + list(x) for c, x in zip(configs, comps, strict=True)]
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        attn = torch.zeros((len(rows), width), dtype=torch.long)
        comp = torch.zeros((len(rows), width), dtype=torch.bool)
        for i, (r, x) in enumerate(zip(rows, comps, strict=True)):
            ids[i, width - len(r) :] = torch.tensor(r)
            attn[i, width - len(r) :] = 1
            if x:
                comp[i, width - len(x) :] = True
        pos = (attn.cumsum(1) - 1).clamp(min=0)
        dev = self.device
        return {"ids": ids.to(dev), "attn": attn.to(dev), "pos": pos.to(dev), "comp": comp.to(dev)}

    def token_logps(self, batch: dict[str, torch.Tensor], sig: torch.Tensor, img: torch.Tensor, *, temperature: float = 1.0) -> torch.Tensor:  # fmt: skip
        """(B, L - 1) log-probability of each token given the ones before (index t scores
        token t + 1), under the policy's logits divided by ``temperature`` (as sampled)."""
        emb = self.embed(batch["ids"], sig, img)
        logits = self.lm(
            inputs_embeds=emb, attention_mask=batch["attn"], position_ids=batch["pos"]
        ).logits
        logp = torch.log_softmax(self._allowed(logits[:, :-1].float()) / temperature, dim=-1)
        return logp.gather(-1, batch["ids"][:, 1:].unsqueeze(-1)).squeeze(-1)

    def _allowed(self, logits: torch.Tensor) -> torch.Tensor:
        """Logits with the placeholder tokens masked out: an answer never contains them."""
        banned = torch.zeros(logits.shape[-1], dtype=torch.bool, device=logits.device)
        banned[[self.sig_id, self.img_id]] = True
        return logits.masked_fill(banned, -1e9)  # finite: masked-out targets times 0 stay 0

    @torch.no_grad()
    def generate(
        self,
        bank: EncodedBank,
        idx: torch.Tensor,
        configs: list[str],
        *,
        max_new_tokens: int,
        greedy: bool = True,
        temperature: float = 1.0,
        generator: torch.Generator | None = None,
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Completions (token ids up to and including end-of-turn) and each token's
        log-probability under the (temperature-scaled) policy."""
        import warnings

        from transformers import DynamicCache

        warnings.filterwarnings("ignore", message=".*past_key_values.*", category=FutureWarning)
        batch = self.assemble(configs)
        sig, img = self.modality_embeddings(bank, idx)
        emb = self.embed(batch["ids"], sig, img)
        attn, pos = batch["attn"], batch["pos"]
        cache = DynamicCache()
        out = self.lm(inputs_embeds=emb, attention_mask=attn, position_ids=pos, past_key_values=cache, use_cache=True)  # fmt: skip
        n = len(configs)
        done = torch.zeros(n, dtype=torch.bool, device=emb.device)
        toks: list[torch.Tensor] = []
        lps: list[torch.Tensor] = []
        last_pos = pos[:, -1:]
        for _ in range(max_new_tokens):
            logp = torch.log_softmax(self._allowed(out.logits[:, -1].float()) / temperature, dim=-1)
            if greedy:
                tok = logp.argmax(-1)
            else:
                tok = torch.multinomial(logp.exp(), 1, generator=generator).squeeze(1)
            tok = torch.where(done, torch.full_like(tok, self.pad_id), tok)
            toks.append(tok)
            lps.append(logp.gather(-1, tok[:, None]).squeeze(1))
            done = done | (tok == self.eos_id)
            if bool(done.all()):
                break
            attn = torch.cat([attn, (~done).long()[:, None] | 1], dim=1)
            last_pos = last_pos + 1
            out = self.lm(input_ids=tok[:, None], attention_mask=attn, position_ids=last_pos, past_key_values=out.past_key_values, use_cache=True)  # fmt: skip
        T = torch.stack(toks, 1).tolist()
        L = torch.stack(lps, 1).tolist()
        comps, logps = [], []
        for row, lrow in zip(T, L, strict=True):
            cut = row.index(self.eos_id) + 1 if self.eos_id in row else len(row)
            comps.append(row[:cut])
            logps.append(lrow[:cut])
        return comps, logps

    def decode(self, completion: list[int]) -> str:
        return self.tokenizer.decode(
            [t for t in completion if t != self.eos_id], skip_special_tokens=False
        )
