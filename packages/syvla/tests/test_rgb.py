"""The RGB path: minigrid's own partial RGB observation, a per-tile encoder that learns to
read it into the symbolic codes, placed where the symbolic partial view goes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from minigrid.wrappers import RGBImgPartialObsWrapper

from icml26.syvla.levels import make_level, partial_view
from icml26.syvla.rgb import (
    TileEncoder,
    TileEncoderConfig,
    place_partial,
    rgb_observer,
    rgb_view,
    tile_accuracy,
    tile_data,
    train_tile_encoder,
)

LEVEL = "BabyAI-PutNextLocal-v0"


def test_rgb_view_is_minigrids_partial_rgb_observation() -> None:
    env = RGBImgPartialObsWrapper(gym.make(LEVEL))
    obs, _ = env.reset(seed=3)
    assert obs["image"].shape == (56, 56, 3)
    assert np.array_equal(rgb_view(env.unwrapped), obs["image"])
    obs, *_ = env.step(2)
    assert np.array_equal(rgb_view(env.unwrapped), obs["image"])


def test_place_partial_matches_partial_view() -> None:
    env = make_level(LEVEL)
    for seed in range(5):
        env.reset(seed=seed)
        codes = env.gen_obs()["image"].transpose(1, 0, 2)
        assert np.array_equal(place_partial(codes, 13), partial_view(env, 13))
    with pytest.raises(ValueError, match="does not fit"):
        place_partial(codes, 9)


def test_tile_encoder_learns_to_read_unseen_frames() -> None:
    """Trained on 300 frames of one stream, it reads most cells of another stream's frames
    (an untrained encoder reads almost none of them)."""
    torch.manual_seed(0)
    frames, codes = tile_data((LEVEL,), 300, seed=0, stream="rgb_train")
    test = tile_data((LEVEL,), 60, seed=0, stream="rgb_test")
    assert frames.shape == (300, 56, 56, 3)
    assert codes.shape == (300, 7, 7, 3)
    # another stream's rooms: only views showing little (a bare wall ahead) recur
    seen = {f.tobytes() for f in frames}
    assert np.mean([f.tobytes() in seen for f in test[0]]) < 0.3
    enc = TileEncoder()
    before = tile_accuracy(enc, *test)["cell"]
    losses = train_tile_encoder(enc, frames, codes, TileEncoderConfig(steps=250), seed=0)
    after = tile_accuracy(enc, *test)
    assert losses[-1] < losses[0] / 5
    assert before < 0.5 < 0.95 < after["cell"]
    view = rgb_observer(enc)
    env = make_level(LEVEL)
    env.reset(seed=11)
    assert view(env, 13).shape == (13, 13, 3)
    assert (view(env, 13) == partial_view(env, 13)).mean() > 0.9


def test_bad_frames_fail_clearly() -> None:
    enc = TileEncoder()
    with pytest.raises(ValueError, match=r"\(B, H, W, 3\)"):
        enc(torch.zeros(56, 56, 3, dtype=torch.uint8))
    with pytest.raises(ValueError, match="multiples of the tile size 8"):
        enc(torch.zeros(1, 50, 56, 3, dtype=torch.uint8))
    with pytest.raises(ValueError, match="steps"):
        TileEncoderConfig(steps=0)
