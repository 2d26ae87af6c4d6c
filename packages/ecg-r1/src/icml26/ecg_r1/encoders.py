"""The two modality encoders (1-D conv over the 12 leads, 2-D conv over the paper image), each
pretrained on its own with multi-label and feature-regression heads.

The official ECG-R1 keeps its ECG encoder (a CoCa model) frozen and trains only a projector
into the language model; here each encoder is pretrained by :func:`pretrain_encoder` on the
training corpus's 13 labels and the simulator's *true* features (not the delineator's
measurements, which the SFT targets cite), then frozen: its read-out token hands the language
model a classifier's label probabilities. The signal encoder with
its heads is also the ``signal_cnn`` baseline (a multi-label 1-D CNN).

Each encoder returns *tokens* (``n_tokens`` pooled feature-map positions, each ``width``
wide) and its heads' outputs (label logits, feature predictions), which the model's
projectors turn into language-model embeddings.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from icml26.ecg_r1.data import N_TARGETS
from icml26.ecg_r1.labels import LABELS

__all__ = [
    "ENCODERS_FILE",
    "EncoderOutput",
    "ImageEncoder",
    "SignalEncoder",
    "load_encoders",
    "pretrain_encoder",
    "save_encoders",
]

#: The encoders' file in a model folder, beside ``save_pretrained``'s files.
ENCODERS_FILE = "encoders.safetensors"


@dataclass
class EncoderOutput:
    tokens: torch.Tensor  # (B, n_tokens, width)
    label_logits: torch.Tensor  # (B, n_labels)
    features: torch.Tensor  # (B, N_TARGETS)

    @property
    def readout(self) -> torch.Tensor:
        """Head outputs as one vector per record (label probabilities, features)."""
        return torch.cat([torch.sigmoid(self.label_logits), self.features], dim=-1)


class _Heads(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2 * width, 2 * width), nn.GELU())
        self.labels = nn.Linear(2 * width, len(LABELS))
        self.features = nn.Linear(2 * width, N_TARGETS)

    def forward(self, pooled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(pooled)
        return self.labels(h), self.features(h)


class SignalEncoder(nn.Module):
    """(B, 12, 1000) mV at 100 Hz -> :class:`EncoderOutput`: four strided 1-D conv blocks,
    then ``n_tokens`` average-pooled positions; heads on the mean- and max-pooled map.

    Args:
        width: channels of the conv blocks and of each token.
        n_tokens: pooled positions, the tokens per record.
    """

    def __init__(self, width: int = 64, n_tokens: int = 8) -> None:
        super().__init__()
        chans = [12, 32, 48, width, width]
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(itertools.pairwise(chans)):
            layers += [
                nn.Conv1d(a, b, 7 if i < 2 else 5, stride=2, padding=3 if i < 2 else 2),
                nn.BatchNorm1d(b),
                nn.GELU(),
            ]
        self.conv = nn.Sequential(*layers)
        self.n_tokens, self.width = n_tokens, width
        self.heads = _Heads(width)

    def forward(self, x: torch.Tensor) -> EncoderOutput:
        """Encode a batch of 12-lead signals.

        Args:
            x: ``(B, 12, 1000)`` signals in mV at 100 Hz.

        Returns:
            :class:`EncoderOutput`: ``(B, n_tokens, width)`` tokens, label logits, features.
        """
        h = self.conv(x)  # (B, C, L)
        tokens = nn.functional.adaptive_avg_pool1d(h, self.n_tokens).transpose(1, 2)
        pooled = torch.cat([h.mean(-1), h.amax(-1)], dim=-1)
        logits, feats = self.heads(pooled)
        return EncoderOutput(tokens, logits, feats)


class ImageEncoder(nn.Module):
    """(B, H, W) paper image in [0, 1] -> :class:`EncoderOutput`: a 4 x 4 patch embedding (one
    patch is 4 mm of paper: 160 ms, 0.4 mV), three strided 2-D conv blocks, ``n_tokens``
    pooled positions (2 rows x n_tokens/2 columns of the page), the same heads.

    Args:
        width: channels of the conv blocks and of each token.
        n_tokens: pooled positions, the tokens per record.
    """

    def __init__(self, width: int = 64, n_tokens: int = 8) -> None:
        super().__init__()
        chans = [24, 32, 48, width]
        layers: list[nn.Module] = [nn.Conv2d(1, chans[0], 4, stride=4), nn.GELU()]
        for a, b in itertools.pairwise(chans):
            layers += [nn.Conv2d(a, b, 3, stride=2, padding=1), nn.BatchNorm2d(b), nn.GELU()]
        self.conv = nn.Sequential(*layers)
        if n_tokens % 2:
            raise ValueError(f"n_tokens must be even (2 rows of the page), got {n_tokens}")
        self.n_tokens, self.width = n_tokens, width
        self.heads = _Heads(width)

    def forward(self, x: torch.Tensor) -> EncoderOutput:
        """Encode a batch of ECG paper images.

        Args:
            x: ``(B, H, W)`` images in ``[0, 1]``.

        Returns:
            :class:`EncoderOutput`: ``(B, n_tokens, width)`` tokens, label logits, features.
        """
        h = self.conv(x.unsqueeze(1))  # (B, C, h, w)
        tokens = (
            nn.functional.adaptive_avg_pool2d(h, (2, self.n_tokens // 2)).flatten(2).transpose(1, 2)
        )
        pooled = torch.cat([h.mean((-2, -1)), h.amax((-2, -1))], dim=-1)
        logits, feats = self.heads(pooled)
        return EncoderOutput(tokens, logits, feats)


def pretrain_encoder(
    encoder: nn.Module,
    inputs: np.ndarray,
    labels: np.ndarray,
    targets: np.ndarray,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    rng: np.random.Generator,
    scale: float = 1.0,
    device: str = "cpu",
) -> list[float]:
    """Train ``encoder`` on binary cross-entropy over the labels plus the mean squared error
    of the feature targets (AdamW, cosine decay); return the per-step losses. ``inputs`` are
    multiplied by ``scale`` (255 -> 1 for uint8 images)."""
    encoder.to(device).train()
    opt = torch.optim.AdamW(encoder.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(steps, 1))
    losses = []
    for _ in range(steps):
        idx = rng.integers(0, len(inputs), batch_size)
        x = torch.as_tensor(inputs[idx], dtype=torch.float32, device=device) * scale
        y = torch.as_tensor(labels[idx], device=device)
        t = torch.as_tensor(targets[idx], device=device)
        out = encoder(x)
        loss = nn.functional.binary_cross_entropy_with_logits(
            out.label_logits, y
        ) + nn.functional.mse_loss(out.features, t)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    encoder.eval()
    return losses


def save_encoders(folder: str | Path, signal: SignalEncoder, image: ImageEncoder) -> Path:
    """Write both encoders into a model folder as ``encoders.safetensors`` (state dicts as
    ``signal.*`` / ``image.*``, their sizes in the file's metadata), beside the files
    ``save_pretrained`` writes, so the folder alone interprets a record.

    Args:
        folder: the model folder (created if missing).
        signal: the frozen signal encoder the model was trained with.
        image: the frozen image encoder.

    Returns:
        The path of the file written.
    """
    from safetensors.torch import save_file

    path = Path(folder) / ENCODERS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {f"signal.{k}": v for k, v in signal.state_dict().items()} | {
        f"image.{k}": v for k, v in image.state_dict().items()
    }
    sizes = {
        name: {"width": enc.width, "n_tokens": enc.n_tokens}
        for name, enc in (("signal", signal), ("image", image))
    }
    tensors = {k: v.detach().cpu().contiguous().clone() for k, v in state.items()}
    save_file(tensors, str(path), metadata={"sizes": json.dumps(sizes)})
    return path


def load_encoders(folder: str | Path, device: str = "cpu") -> tuple[SignalEncoder, ImageEncoder]:
    """The encoders :func:`save_encoders` wrote into a model folder, frozen (eval mode, no
    gradients).

    Args:
        folder: the model folder (or the ``encoders.safetensors`` file itself).
        device: where to put them.

    Returns:
        ``(signal_encoder, image_encoder)``.

    Raises:
        FileNotFoundError: the folder has no ``encoders.safetensors``.
    """
    from safetensors import safe_open
    from safetensors.torch import load_file

    path = Path(folder)
    path = path if path.suffix == ".safetensors" else path / ENCODERS_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"no {ENCODERS_FILE} in {path.parent}: save the encoders with save_encoders(folder, "
            "signal, image) beside save_pretrained, or pass encoders=(signal, image)"
        )
    with safe_open(str(path), framework="pt") as f:
        sizes = json.loads((f.metadata() or {}).get("sizes", "{}"))
    state = load_file(str(path))
    se = SignalEncoder(**sizes.get("signal", {}))
    ie = ImageEncoder(**sizes.get("image", {}))
    se.load_state_dict({k[7:]: v for k, v in state.items() if k.startswith("signal.")})
    ie.load_state_dict({k[6:]: v for k, v in state.items() if k.startswith("image.")})
    for enc in (se, ie):
        enc.to(device).eval().requires_grad_(False)
    return se, ie
