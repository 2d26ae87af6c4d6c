"""The SyVLA network: VL backbone, reasoning head, Intention Decoupling and the action expert.

::

    view (S x S x 3 codes) --object + colour + state embeddings--> one feature per cell
        --conv--FiLM(text)--> --conv (stride)--FiLM(text)--> image tokens
    text (frozen MiniLM vector) --linear + norm--> t                     [= the VL backbone]
    fused tokens h = [summary(t, multi-head text-queried pooling of the image), image tokens...]

    reasoning head(h_summary) -> answer logits (VQA answers, discrete action tokens)
    Intention Decoupling: K learned queries cross-attend to sg(h) (stop-gradient if decouple)
        -> action head -> pi(a | s, l);  value head -> V(s, l)

*Intention Decoupling* (knowledge insulation): control-relevant features are read from the
fused features by learned query tokens, and with ``decouple=True`` the action path sees
``h.detach()`` — the action / RL losses never update the VL backbone, which is trained only by
the reasoning head's VQA losses. The discrete action-token read-out of the forward
(``PolicyOutput.reasoning``) is an action loss too: BC trains it only without decoupling
(:func:`icml26.syvla.bc.train_bc`), so with ``decouple=True`` no action loss reaches the
backbone or the reasoning head (the VQA answerer), and with it the read-out sees
``h.detach()`` anyway. ``decouple=False`` is the ablation: the same network with gradients
flowing from the action losses into the backbone and the reasoning head.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from icml26.syvla.levels import N_ACTIONS
from icml26.syvla.vqa import ANSWERS

__all__ = ["ModelConfig", "PolicyOutput", "SyVLA", "check_codes"]

N_OBJECT_CODES, N_COLOR_CODES, N_STATE_CODES = 11, 6, 3
#: minigrid's three code channels and how many codes each holds
CODE_CHANNELS = (("object", N_OBJECT_CODES), ("colour", N_COLOR_CODES), ("state", N_STATE_CODES))


def check_codes(view: torch.Tensor) -> None:
    """Raise if ``view`` (``(..., 3)`` integer codes) holds a code outside its channel's range.

    Args:
        view: minigrid ``(object, colour, state)`` codes in the last axis.

    Raises:
        ValueError: a non-integer view, or a code outside ``[0, 11)`` (object),
            ``[0, 6)`` (colour) or ``[0, 3)`` (state), naming the channel.
    """
    if view.is_floating_point() or view.is_complex() or view.dtype == torch.bool:
        raise ValueError(f"observation must hold integer minigrid codes, got {view.dtype}")
    if view.numel() == 0:
        return
    flat = view.reshape(-1, view.shape[-1])
    lo, hi = flat.min(0).values.tolist(), flat.max(0).values.tolist()
    for c, (name, n) in enumerate(CODE_CHANNELS):
        if lo[c] < 0 or hi[c] >= n:
            raise ValueError(
                f"observation channel {c} ({name}) must hold codes in [0, {n - 1}], "
                f"got values in [{lo[c]}, {hi[c]}]"
            )


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the network.

    Attributes:
        view_size: side of the egocentric view (odd: the agent sits at its centre).
        text_dim: the sentence encoder's width (384 for MiniLM).
        d_model: token width.
        n_queries: intention query tokens.
        hidden: width of the heads.
        heads: attention heads of the summary token's text-queried pooling.
        stride: stride of the second convolution (1: one image token per cell).

    Raises:
        ValueError: an even or too small ``view_size``, or a size below 1.
    """

    view_size: int = 13
    text_dim: int = 384
    d_model: int = 32
    n_queries: int = 4
    hidden: int = 64
    heads: int = 4
    stride: int = 1

    def __post_init__(self) -> None:
        if self.view_size < 3 or self.view_size % 2 == 0:
            raise ValueError(f"view_size must be odd and >= 3, got {self.view_size}")
        if min(self.d_model, self.n_queries, self.hidden, self.heads, self.stride) < 1:
            raise ValueError("d_model, n_queries, hidden, heads and stride must be >= 1")


@dataclass
class PolicyOutput:
    logits: torch.Tensor  # (B, n_actions)
    value: torch.Tensor  # (B,)
    reasoning: torch.Tensor  # (B, n_answers): the reasoning head on the control input (detached
    # from the backbone when decoupled): the discrete action-token logits (trained by BC only
    # without decoupling)
    key: torch.Tensor  # (B, (1 + T) * d): unit-norm flattened fused tokens (retrieval key)


class FiLM(nn.Module):
    """Feature-wise modulation of a feature map by the text token (Perez et al., 2018)."""

    def __init__(self, d_text: int, channels: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d_text, 2 * channels)

    def forward(self, x: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        gamma, beta = self.proj(text).unsqueeze(-1).unsqueeze(-1).chunk(2, dim=1)
        return torch.relu(x * (1 + gamma) + beta)


class VLBackbone(nn.Module):
    """Image encoder + text projection + fusion: ``(view, text) -> fused tokens``.

    The image encoder is a small CNN over cells embedded by their object, colour and state
    codes (factorised: "red" is one direction whatever the object) whose feature maps are
    FiLM-modulated by the text (the fusion of the BabyAI baselines). The fused tokens are a
    summary token (the text and the scene pooled by ``heads`` text-queried attention heads:
    what the reasoning head reads) followed by one token per image cell (``stride`` 1) or
    per 2 x 2 block (``stride`` 2). The factorised per-cell embedding is what lets the
    backbone answer "what colour is the key?": the former joint-code 3x3 stride-2 patch
    embedding plateaued at 0.55 held-out VQA accuracy (colour questions near chance).
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d = cfg.d_model
        # one token per cell: embeddings of its object, colour and state codes (factorised,
        # so "red" is the same direction on a ball and a key) plus its position
        self.obj = nn.Embedding(N_OBJECT_CODES, d)
        self.col = nn.Embedding(N_COLOR_CODES, d)
        self.state = nn.Embedding(N_STATE_CODES, d)
        # unit-norm sentence vectors have tiny coordinates: normalise the projection so the
        # text can modulate the image features from the first step
        self.text = nn.Sequential(nn.Linear(cfg.text_dim, d), nn.LayerNorm(d))
        self.conv1 = nn.Conv2d(d, d, 3, padding=1)
        self.film1 = FiLM(d, d)
        self.conv2 = nn.Conv2d(d, d, 3, stride=cfg.stride, padding=1)
        self.film2 = FiLM(d, d)
        side = (cfg.view_size - 1) // cfg.stride + 1
        self.pos = nn.Parameter(torch.randn(1, side * side, d) * 0.02)
        self.heads = cfg.heads
        self.pool_query = nn.Linear(d, d * cfg.heads, bias=False)
        self.pool_key = nn.Linear(d, d * cfg.heads, bias=False)
        self.mix = nn.Linear((1 + cfg.heads) * d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, view: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        """``view``: (B, S, S, 3) integer codes; ``text``: (B, text_dim) -> (B, 1 + S*S, d)."""
        check_codes(view)
        v = view.long()
        x = self.obj(v[..., 0]) + self.col(v[..., 1]) + self.state(v[..., 2])  # (B, S, S, d)
        t = self.text(text)
        x = self.film1(self.conv1(x.permute(0, 3, 1, 2)), t)
        img = self.film2(self.conv2(x), t).flatten(2).transpose(1, 2) + self.pos
        # the summary token: the text and the scene read by text-conditioned attention pooling
        b, n, d = img.shape
        q = self.pool_query(t).view(b, self.heads, d)
        k = self.pool_key(img).view(b, n, self.heads, d)
        attn = (torch.einsum("bhd,bthd->bht", q, k) * d**-0.5).softmax(-1)
        pooled = torch.einsum("bht,btd->bhd", attn, img).flatten(1)
        summary = torch.relu(self.mix(torch.cat([t, pooled], dim=-1)))
        tokens = torch.cat([summary.unsqueeze(1), img], dim=1)
        return self.norm(tokens)


class IntentionQueries(nn.Module):
    """K learned query tokens cross-attending to the fused features (the control read-out)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d = cfg.d_model
        self.queries = nn.Parameter(torch.randn(cfg.n_queries, d) * d**-0.5)
        self.key = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(d, d)
        self.scale = d**-0.5

    def forward(self, fused: torch.Tensor) -> torch.Tensor:
        """(B, T, d) -> (B, K * d): softmax(q k^T / sqrt(d)) v for each query."""
        scores = torch.einsum("kd,btd->bkt", self.queries, self.key(fused)) * self.scale
        read = torch.einsum("bkt,btd->bkd", scores.softmax(-1), self.value(fused))
        return torch.relu(read).flatten(1)


class SyVLA(nn.Module):
    """The VLA model. ``decouple`` switches the gradient isolation of Intention Decoupling.

    Args:
        cfg: the sizes (default :class:`ModelConfig`).
        decouple: the action and value heads read the fused features through a
            stop-gradient (``True``) or train the backbone too.

    Call ``model(view, instruction_vector)`` for a :class:`PolicyOutput`, ``model.reason(view,
    question_vector)`` for answer logits.
    """

    def __init__(self, cfg: ModelConfig | None = None, *, decouple: bool = True) -> None:
        super().__init__()
        self.cfg = cfg = cfg or ModelConfig()
        self.decouple = decouple
        self.backbone = VLBackbone(cfg)
        self.reasoning_head = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, len(ANSWERS))
        )
        self.intention = IntentionQueries(cfg)
        flat = cfg.n_queries * cfg.d_model
        self.action_head = nn.Sequential(
            nn.Linear(flat, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, N_ACTIONS)
        )
        self.value_head = nn.Sequential(
            nn.Linear(flat, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, 1)
        )

    # parameter groups ------------------------------------------------------------------
    def backbone_parameters(self) -> list[nn.Parameter]:
        """The vision-language backbone (image encoder, text projection, fusion).

        Returns:
            Its parameters.
        """
        return list(self.backbone.parameters())

    def control_parameters(self) -> list[nn.Parameter]:
        """The action expert: intention queries, action and value heads."""
        return [
            *self.intention.parameters(),
            *self.action_head.parameters(),
            *self.value_head.parameters(),
        ]

    # forwards --------------------------------------------------------------------------
    def reason(self, view: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        """Answer logits of the reasoning head for a question (or instruction) ``text``."""
        return self.reasoning_head(self.backbone(view, text)[:, 0])

    def forward(self, view: torch.Tensor, instruction: torch.Tensor) -> PolicyOutput:
        """Act on a batch of observations: backbone, intention queries, heads.

        Args:
            view: the batch of views (cell codes) the backbone encodes.
            instruction: the batch of tokenised instructions.

        Returns:
            :class:`PolicyOutput`: action logits, value, reasoning logits (on the control
            input, detached from the backbone when ``decouple``) and the unit-norm retrieval key.
        """
        fused = self.backbone(view, instruction)
        control_in = fused.detach() if self.decouple else fused
        z = self.intention(control_in)
        # the retrieval key: the whole fused token map (LayerNorm'ed tokens are centred, so
        # cosine similarity tracks the scene layout, not a near-constant mean token)
        key = nn.functional.normalize(fused.detach().flatten(1), dim=-1)
        return PolicyOutput(
            logits=self.action_head(z),
            value=self.value_head(z).squeeze(-1),
            reasoning=self.reasoning_head(control_in[:, 0]),
            key=key,
        )
