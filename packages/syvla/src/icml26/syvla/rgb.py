"""RGB observations: minigrid's partial RGB view, read by a per-tile patch encoder.

minigrid's ``RGBImgPartialObsWrapper`` renders the agent's 7 x 7 partial view as pixels
(``tile_size`` x ``tile_size`` per cell, the agent drawn at the bottom centre, the cells it
sees highlighted). :class:`TileEncoder` is a patch encoder with one patch per tile (a
convolution of kernel and stride ``tile_size``): it maps each tile to the cell's
``(object, colour, state)`` codes, with "unseen" (0) for a tile the agent does not see. Its
codes fill the same agent-centred frame as :func:`~icml26.syvla.levels.partial_view`, so
the VQA-pretrained backbone and the policy read RGB input unchanged.

The encoder is trained on frames of random play (its own seed stream) labelled by the
environment's symbolic partial view, and scored on frames of another stream. minigrid draws
each tile deterministically from its cell, so the encoder can be exact: it makes the policy
see pixels, it does not test robustness to visual noise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26.shared import rng_for
from icml26.syvla.data import VecEnv
from icml26.syvla.model import CODE_CHANNELS

__all__ = [
    "TILE",
    "TileEncoder",
    "TileEncoderConfig",
    "place_partial",
    "rgb_observer",
    "rgb_view",
    "tile_accuracy",
    "tile_data",
    "train_tile_encoder",
]

#: minigrid's ``RGBImgPartialObsWrapper`` default: 8 pixels per cell (a 56 x 56 view).
TILE = 8
_SIZES = [n for _, n in CODE_CHANNELS]


def rgb_view(env: Any, tile_size: int = TILE) -> np.ndarray:
    """The agent's partial view as pixels, exactly ``RGBImgPartialObsWrapper``'s image:
    ``(V * tile_size, V * tile_size, 3)`` uint8, row 0 farthest ahead."""
    return env.get_frame(tile_size=tile_size, agent_pov=True)


def place_partial(codes: np.ndarray, size: int) -> np.ndarray:
    """A ``(V, V, 3)`` partial view in row order (agent at the bottom centre) placed in the
    ``(size, size, 3)`` agent-centred frame of :func:`~icml26.syvla.levels.partial_view`.

    Raises:
        ValueError: a view that does not fit ahead of the frame's centre.
    """
    v = codes.shape[0]
    half = size // 2
    if v > size or v > half + 1:
        raise ValueError(f"a {v} x {v} partial view does not fit ahead of the centre of {size}")
    out = np.zeros((size, size, 3), dtype=np.uint8)
    c0 = half - v // 2
    out[half - v + 1 : half + 1, c0 : c0 + v] = codes
    return out


class TileEncoder(nn.Module):
    """Per-tile patch encoder: ``(B, H, W, 3)`` uint8 pixels -> per-cell code logits.

    Args:
        tile_size: pixels per cell (kernel and stride of the patch convolution).
        hidden: features per tile.
    """

    def __init__(self, tile_size: int = TILE, hidden: int = 64) -> None:
        super().__init__()
        if tile_size < 1 or hidden < 1:
            raise ValueError("tile_size and hidden must be >= 1")
        self.tile_size = tile_size
        self.patch = nn.Conv2d(3, hidden, tile_size, stride=tile_size)
        self.head = nn.Conv2d(hidden, sum(_SIZES), 1)

    def forward(self, frames: torch.Tensor) -> list[torch.Tensor]:
        """Logits ``(B, V, V, n)`` for the object, colour and state channel of every cell.

        Raises:
            ValueError: frames that are not ``(B, H, W, 3)`` with ``H``, ``W`` multiples of
                ``tile_size``.
        """
        if frames.ndim != 4 or frames.shape[-1] != 3:
            raise ValueError(f"frames must be (B, H, W, 3) pixels, got {tuple(frames.shape)}")
        if frames.shape[1] % self.tile_size or frames.shape[2] % self.tile_size:
            raise ValueError(f"frame sides must be multiples of the tile size {self.tile_size}")
        x = frames.permute(0, 3, 1, 2).float() / 255.0
        logits = self.head(torch.relu(self.patch(x))).permute(0, 2, 3, 1)
        return list(logits.split(_SIZES, dim=-1))

    @torch.no_grad()
    def codes(self, frames: np.ndarray) -> np.ndarray:
        """``(B, V, V, 3)`` uint8 codes (argmax per channel) of ``(B, H, W, 3)`` frames."""
        device = next(self.parameters()).device
        logits = self(torch.as_tensor(np.asarray(frames), device=device))
        return torch.stack([lg.argmax(-1) for lg in logits], -1).cpu().numpy().astype(np.uint8)


@dataclass(frozen=True)
class TileEncoderConfig:
    """Settings of :func:`train_tile_encoder`.

    Attributes:
        frames: training frames (random play on the levels).
        test_frames: held-out frames of another stream (the reported accuracy).
        steps: Adam steps.
        batch: frames per step.
        lr: Adam learning rate.
        hidden: features per tile.
    """

    frames: int = 1500
    test_frames: int = 300
    steps: int = 600
    batch: int = 32
    lr: float = 3e-3
    hidden: int = 64

    def __post_init__(self) -> None:
        if min(self.frames, self.test_frames, self.steps, self.batch, self.hidden) < 1:
            raise ValueError("frames, test_frames, steps, batch and hidden must be >= 1")
        if self.lr <= 0:
            raise ValueError(f"lr must be positive, got {self.lr}")


def tile_data(
    levels: tuple[str, ...], n: int, *, seed: int, stream: str, tile_size: int = TILE
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (RGB frame, symbolic partial view) pairs of random play on ``levels``.

    Args:
        levels: Gymnasium ids of minigrid environments (``BabyAI-GoToLocal-v0``).
        n: the number of frames.
        seed: the seed whose ``env/<stream>`` episodes and ``actions/<stream>`` play are used.
        stream: the stream's name (training and test frames use different ones).
        tile_size: pixels per cell.

    Returns:
        Frames ``(n, H, W, 3)`` uint8 and codes ``(n, V, V, 3)`` in row order (minigrid's
        ``image`` transposed).
    """
    env = VecEnv(min(n, 8), "train", 13, seed=seed, stream=stream, levels=levels)
    rng = rng_for(seed, "actions", stream)
    frames: list[np.ndarray] = []
    codes: list[np.ndarray] = []
    env.reset()
    while len(frames) < n:
        for e in env.current:
            frames.append(rgb_view(e, tile_size))
            codes.append(e.gen_obs()["image"].transpose(1, 0, 2))
        # random turns, steps, pickups and drops: carried objects and opened views appear
        env.step(rng.integers(0, 5, size=env.n))
    return np.stack(frames[:n]), np.stack(codes[:n]).astype(np.uint8)


def train_tile_encoder(
    encoder: TileEncoder, frames: np.ndarray, codes: np.ndarray, cfg: TileEncoderConfig, seed: int
) -> list[float]:
    """Train ``encoder`` by the cross-entropy of every tile's three codes against the
    symbolic view.

    Args:
        encoder: the tile encoder (trained in place).
        frames: ``(N, H, W, 3)`` RGB frames (:func:`tile_data`).
        codes: ``(N, V, V, 3)`` their symbolic partial views.
        cfg: the settings (``steps``, ``batch``, ``lr`` are used here).
        seed: the seed of the batch draws (its ``rgb`` stream).

    Returns:
        The loss per step.

    Raises:
        ValueError: no frames, or frames and codes of different lengths.
    """
    if len(frames) != len(codes) or len(frames) == 0:
        raise ValueError("frames and codes must be non-empty and of one length")
    device = next(encoder.parameters()).device
    rng = rng_for(seed, "rgb")
    opt = torch.optim.Adam(encoder.parameters(), lr=cfg.lr)
    losses = []
    for _ in range(cfg.steps):
        idx = rng.integers(0, len(frames), size=cfg.batch)
        logits = encoder(torch.as_tensor(frames[idx], device=device))
        target = torch.as_tensor(codes[idx], device=device).long()
        loss = torch.stack(
            [
                nn.functional.cross_entropy(
                    lg.reshape(-1, lg.shape[-1]), target[..., c].reshape(-1)
                )
                for c, lg in enumerate(logits)
            ]
        ).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


def tile_accuracy(encoder: TileEncoder, frames: np.ndarray, codes: np.ndarray) -> dict[str, float]:
    """``cell``: fraction of cells whose three codes are all right; ``frame``: fraction of
    frames read without a single wrong cell."""
    pred = np.concatenate([encoder.codes(frames[i : i + 256]) for i in range(0, len(frames), 256)])
    cell_ok = (pred == codes).all(-1)
    return {"cell": float(cell_ok.mean()), "frame": float(cell_ok.all((1, 2)).mean())}


def rgb_observer(encoder: TileEncoder) -> Callable[[Any, int], np.ndarray]:
    """A view function for :class:`~icml26.syvla.data.VecEnv` (``observer=``) or your own
    loop: the agent's RGB view through ``encoder``, placed in the model's frame.

    Args:
        encoder: a trained :class:`TileEncoder` (put in eval mode).

    Returns:
        ``view(env, size)``: the ``(size, size, 3)`` codes of a minigrid environment's
        partial RGB view (``env.unwrapped``), like :func:`~icml26.syvla.levels.observe`.
    """
    encoder.eval()

    def view(env: Any, size: int) -> np.ndarray:
        return place_partial(encoder.codes(rgb_view(env, encoder.tile_size)[None])[0], size)

    return view
