"""Data loaders, classifiers, checkpoints and training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.nppr.data import from_arrays, load_dataset, load_npz
from icml26.nppr.models import ClassifierSpec, build_classifier, load_classifier, save_classifier
from icml26.nppr.train import TrainConfig, train_classifier, training_perturbation


def test_digits_are_in_unit_range_and_split() -> None:
    d = load_dataset("digits", seed=0)
    assert d.input_shape == (1, 8, 8)
    assert d.n_classes == 10
    assert len(d.y_train) + len(d.y_test) == 1797
    assert float(d.x_train.min()) >= 0.0
    assert float(d.x_train.max()) <= 1.0


def test_npz_round_trip_and_errors(tmp_path: Path) -> None:
    x = np.random.default_rng(0).uniform(size=(50, 5, 5)).astype(np.float32)
    y = np.arange(50) % 3
    np.savez(tmp_path / "d.npz", x=x, y=y)
    d = load_npz(tmp_path / "d.npz")
    assert d.input_shape == (1, 5, 5)
    assert d.n_classes == 3
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_npz(tmp_path / "missing.npz")
    np.savez(tmp_path / "bad.npz", x=x * 255, y=y)
    with pytest.raises(ValueError, match=r"scaled to \[0, 1\]"):
        load_npz(tmp_path / "bad.npz")
    np.savez(tmp_path / "nolabels.npz", x=x)
    with pytest.raises(ValueError, match="lacks the arrays"):
        load_npz(tmp_path / "nolabels.npz")


def test_unknown_dataset_and_stray_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("imagenet")
    with pytest.raises(ValueError, match="embedded"):
        load_dataset("digits", path=tmp_path)
    with pytest.raises(ValueError, match="needs a path"):
        load_dataset("npz")


@pytest.mark.parametrize("arch", ["cnn", "resnet"])
@pytest.mark.parametrize("shape", [(1, 28, 28), (1, 8, 8), (1, 40)])
def test_classifiers_and_checkpoints(arch: str, shape: tuple[int, ...], tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = build_classifier(ClassifierSpec(arch, shape, 10, 4)).eval()
    x = torch.rand(3, *shape)
    out = model(x)
    assert out.shape == (3, 10)
    path = save_classifier(model, tmp_path / "m.safetensors")
    again = load_classifier(path)
    assert not again.training
    assert torch.allclose(again(x), out)


def test_load_refuses_foreign_files(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    save_file({"w": torch.zeros(2)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(ValueError, match="not an icml26-nppr classifier"):
        load_classifier(tmp_path / "other.safetensors")
    with pytest.raises(FileNotFoundError):
        load_classifier(tmp_path / "none.safetensors")


def test_training_learns_digits_and_resumes(tmp_path: Path) -> None:
    d = from_arrays("toy", *_blobs())
    torch.manual_seed(0)
    model = build_classifier(ClassifierSpec("cnn", d.input_shape, 3, 4))
    cfg = TrainConfig(epochs=8, batch_size=32, lr=1e-2)
    train_classifier(model, d.x_train, d.y_train, cfg, checkpoint_dir=tmp_path, tag="t")
    acc = float((model(d.x_test).argmax(-1) == d.y_test).float().mean())
    assert acc > 0.9
    assert (tmp_path / "t.epoch.pt").is_file()
    # resuming a finished run trains no further and gives the same weights
    again = build_classifier(ClassifierSpec("cnn", d.input_shape, 3, 4))
    train_classifier(again, d.x_train, d.y_train, cfg, checkpoint_dir=tmp_path, tag="t")
    assert torch.allclose(again(d.x_test), model(d.x_test))


def _blobs() -> tuple[np.ndarray, np.ndarray]:
    """Three classes of 6x6 images: a bright row at the top, middle or bottom."""
    rng = np.random.default_rng(0)
    y = np.arange(300) % 3
    x = rng.uniform(0, 0.3, size=(300, 6, 6))
    for i, c in enumerate(y):
        x[i, 2 * c : 2 * c + 2] += 0.6
    return x.clip(0, 1).astype(np.float32), y


@pytest.mark.parametrize("training", ["fgsm", "pgd"])
def test_training_perturbations_stay_in_the_ball(training: str) -> None:
    model = build_classifier(ClassifierSpec("cnn", (1, 8, 8), 3, 4)).eval()
    x, y = torch.rand(8, 1, 8, 8), torch.randint(0, 3, (8,))
    xa = training_perturbation(model, x, y, TrainConfig(training=training, eps=0.1))
    assert float((xa - x).abs().max()) <= 0.1 + 1e-6
    assert float(xa.min()) >= 0.0
    assert float(xa.max()) <= 1.0


def test_bad_train_config() -> None:
    with pytest.raises(ValueError, match="training"):
        TrainConfig(training="trades")
    with pytest.raises(ValueError, match="eps"):
        TrainConfig(training="fgsm", eps=0.0)


def test_torchvision_style_dataset_objects() -> None:
    from icml26.nppr.data import dataset_to_arrays

    items = [(torch.full((1, 4, 4), i / 10), i % 2) for i in range(10)]  # ds[i] -> (tensor, label)
    x, y = dataset_to_arrays(items)
    d = from_arrays("list", x, y, test_fraction=0.3)
    assert d.input_shape == (1, 4, 4)
    assert len(d.y_test) == 3
    assert d.n_classes == 2
