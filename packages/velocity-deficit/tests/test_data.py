"""Dataset specs, embedded data and user files (npy and image folders), with bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml26.velocity_deficit.data import DatasetError, load_dataset, parse_spec


def test_specs() -> None:
    assert parse_spec("gmm64") == ("gmm", "64")
    assert parse_spec("npy:/a/b.npy") == ("npy", "/a/b.npy")
    for bad in ("cifar10", "gmm", "gmm0", "npy:", ""):
        with pytest.raises(DatasetError):
            parse_spec(bad)


def test_gmm_and_digits() -> None:
    ds = load_dataset("gmm16", n_train=300, n_val=50, n_test=100, seed=3)
    assert ds.x_train.shape == (300, 16)
    assert ds.x_val.shape == (50, 16)
    assert ds.x_test.shape == (100, 16)
    assert ds.gmm is not None
    assert ds.n_classes == 8
    # the density is fixed per dimension, the draws follow the seed
    again = load_dataset("gmm16", n_train=300, n_test=100, seed=4)
    np.testing.assert_array_equal(ds.gmm.means, again.gmm.means)
    digits = load_dataset("digits", n_test=1000)
    assert digits.dim == 64
    assert digits.image_shape == (8, 8)
    assert len(digits.x_test) == len(digits.x_val) == 1797 // 6  # a sixth each at most
    # no held-out row is a training row (by content, not by index)
    train = {row.tobytes() for row in digits.x_train}
    assert not any(row.tobytes() in train for row in digits.x_test)
    assert not any(row.tobytes() in train for row in digits.x_val)
    assert digits.x_train.min() >= -1
    assert digits.x_train.max() <= 1
    assert set(np.unique(digits.y_train)) == set(range(10))


def test_npy_with_labels_and_images(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 4, 5)).astype(np.float32)
    np.save(tmp_path / "arr.npy", x)
    np.save(tmp_path / "arr.labels.npy", np.arange(60) % 3)
    ds = load_dataset(f"npy:{tmp_path / 'arr.npy'}", n_val=10, n_test=10)
    assert ds.dim == 20
    assert ds.image_shape == (4, 5)
    assert ds.n_classes == 3
    from PIL import Image

    for cls in ("a", "b"):
        (tmp_path / "imgs" / cls).mkdir(parents=True)
        for i in range(6):
            Image.fromarray(rng.integers(0, 255, (6, 6), dtype=np.uint8)).save(
                tmp_path / "imgs" / cls / f"{i}.png"
            )
    imgs = load_dataset(f"images:{tmp_path / 'imgs'}", n_val=2, n_test=2)
    assert imgs.dim == 36
    assert imgs.n_classes == 2
    assert imgs.image_shape == (6, 6)
    assert imgs.x_train.min() >= -1
    assert imgs.x_train.max() <= 1
    Image.fromarray(np.zeros((7, 7), dtype=np.uint8)).save(tmp_path / "imgs" / "a" / "odd.png")
    with pytest.raises(DatasetError, match="resize"):
        load_dataset(f"images:{tmp_path / 'imgs'}", n_val=2, n_test=2)


def test_bad_user_files(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(f"npy:{tmp_path / 'missing.npy'}")
    np.save(tmp_path / "nan.npy", np.array([[0.0, np.nan]] * 30))
    with pytest.raises(DatasetError, match="NaN"):
        load_dataset(f"npy:{tmp_path / 'nan.npy'}", n_val=2, n_test=5)
    np.save(tmp_path / "vec.npy", np.zeros(30))
    with pytest.raises(DatasetError, match=r"\(N, d\)"):
        load_dataset(f"npy:{tmp_path / 'vec.npy'}", n_val=2, n_test=5)
    np.save(tmp_path / "ok.npy", np.zeros((30, 2)))
    np.save(tmp_path / "ok.labels.npy", np.zeros(29))
    with pytest.raises(DatasetError, match="29 labels for 30"):
        load_dataset(f"npy:{tmp_path / 'ok.npy'}", n_val=2, n_test=5)
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(f"images:{tmp_path / 'nope'}")
    np.save(tmp_path / "five.npy", np.zeros((5, 2)))  # a sixth of 5 rows is no split at all
    with pytest.raises(DatasetError, match="too few for a validation split"):
        load_dataset(f"npy:{tmp_path / 'five.npy'}")
