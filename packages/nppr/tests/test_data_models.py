"""Data loaders, classifiers, checkpoints and training."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.nppr.data import from_arrays, load_cifar, load_dataset, load_image_folder, load_npz
from icml26.nppr.models import ClassifierSpec, build_classifier, load_classifier, save_classifier
from icml26.nppr.train import TrainConfig, train_classifier, training_perturbation


def test_digits_are_in_unit_range_and_split_the_same_way_every_time() -> None:
    d = load_dataset("digits")
    assert d.input_shape == (1, 8, 8)
    assert d.n_classes == 10
    assert len(d.y_train) + len(d.y_test) == 1797
    assert float(d.x_train.min()) >= 0.0
    assert float(d.x_train.max()) <= 1.0
    assert "fixed seeded" in d.split
    assert torch.equal(load_dataset("digits").x_test, d.x_test)  # no run seed moves the split
    _no_test_item_in_train(d)


def _no_test_item_in_train(d) -> None:  # type: ignore[no-untyped-def]
    train = {bytes(r.numpy().tobytes()) for r in d.x_train.flatten(1)}
    dupes = sum(bytes(r.numpy().tobytes()) in train for r in d.x_test.flatten(1))
    assert dupes <= 0.02 * len(d.y_test)  # by content (digits has a few exact repeats)


def _fake_cifar(root: Path, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """A CIFAR python-format folder whose train and test images are marked apart: train
    pixels are even, test pixels odd."""
    rng = np.random.default_rng(0)
    label = "labels" if classes == 10 else "fine_labels"
    folder = root / ("cifar-10-batches-py" if classes == 10 else "cifar-100-python")
    folder.mkdir(parents=True)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    if classes == 100:
        names = ["train", "test"]
    for name in names:
        n = 4 if "test" not in name else 6
        odd = int("test" in name)
        data = (rng.integers(0, 127, size=(n, 3072)) * 2 + odd).astype(np.uint8)
        with (folder / name).open("wb") as fh:
            pickle.dump({"data": data, label: list(rng.integers(0, classes, n))}, fh)
    return folder


@pytest.mark.parametrize("classes", [10, 100])
def test_cifar_trains_on_the_train_batches_and_tests_on_the_test_batch(
    tmp_path: Path, classes: int
) -> None:
    _fake_cifar(tmp_path, classes)
    d = load_dataset(f"cifar{classes}", path=tmp_path)
    n_train = 20 if classes == 10 else 4
    assert (len(d.y_train), len(d.y_test)) == (n_train, 6)
    assert d.input_shape == (3, 32, 32)
    assert d.split == "standard"
    pixels = lambda t: np.rint(t.numpy() * 255).astype(int)  # noqa: E731
    assert (pixels(d.x_train) % 2 == 0).all()  # every training image from the train batches
    assert (pixels(d.x_test) % 2 == 1).all()  # every test image from the test batch


def test_cifar_bad_folders(tmp_path: Path) -> None:
    folder = _fake_cifar(tmp_path, 10)
    (folder / "data_batch_3").unlink()
    with pytest.raises(FileNotFoundError, match="data_batch_3"):
        load_cifar(tmp_path)
    with (folder / "data_batch_3").open("wb") as fh:
        pickle.dump({"images": []}, fh)
    with pytest.raises(ValueError, match="not a CIFAR batch"):
        load_cifar(tmp_path)


def _image(path: Path, value: int, size: int = 5) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((size, size, 3), value, dtype=np.uint8)).save(path)


def test_image_folder_uses_its_train_and_test_folders(tmp_path: Path) -> None:
    for split, value in (("train", 10), ("test", 200)):
        for c in ("cat", "dog"):
            for i in range(3):
                _image(tmp_path / split / c / f"{i}.png", value)
    d = load_image_folder(tmp_path)
    assert (len(d.y_train), len(d.y_test)) == (6, 6)
    assert d.input_shape == (3, 5, 5)
    assert float(d.x_train.max()) == pytest.approx(10 / 255)
    assert float(d.x_test.min()) == pytest.approx(200 / 255)
    assert d.y_train.tolist() == [0, 0, 0, 1, 1, 1]
    assert load_dataset("imagefolder", path=tmp_path, image_size=4).input_shape == (3, 4, 4)


def test_tiny_imagenet_layout(tmp_path: Path) -> None:
    """train/<wnid>/images/*.JPEG and val/images/* labelled by val/val_annotations.txt."""
    for c, value in (("n01", 10), ("n02", 20)):
        for i in range(2):
            _image(tmp_path / "train" / c / "images" / f"{c}_{i}.png", value)
    notes = []
    for i, (c, value) in enumerate((("n02", 220), ("n01", 210), ("n02", 220))):
        _image(tmp_path / "val" / "images" / f"val_{i}.png", value)
        notes.append(f"val_{i}.png\t{c}\t0\t0\t5\t5")
    (tmp_path / "val" / "val_annotations.txt").write_text("\n".join(notes) + "\n")
    d = load_image_folder(tmp_path)
    assert d.y_train.tolist() == [0, 0, 1, 1]
    assert d.y_test.tolist() == [1, 0, 1]
    assert d.x_test[1].max().item() == pytest.approx(210 / 255)
    (tmp_path / "val" / "val_annotations.txt").write_text("val_0.png\tn99\n")
    with pytest.raises(ValueError, match=r"val_annotations\.txt:1"):
        load_image_folder(tmp_path)


def test_image_folder_bad_layouts(tmp_path: Path) -> None:
    _image(tmp_path / "train" / "cat" / "0.png", 1)
    with pytest.raises(ValueError, match="train/<class>/ and test/<class>/"):
        load_image_folder(tmp_path)  # no test split: never a re-split of the train images
    _image(tmp_path / "val" / "bird" / "0.png", 1)
    with pytest.raises(ValueError, match="bird"):
        load_image_folder(tmp_path)
    other = tmp_path / "sizes"
    _image(other / "train" / "cat" / "0.png", 1)
    _image(other / "train" / "cat" / "1.png", 1, size=7)
    _image(other / "test" / "cat" / "0.png", 1)
    with pytest.raises(ValueError, match="different sizes"):
        load_image_folder(other)
    assert load_image_folder(other, image_size=5).input_shape == (3, 5, 5)


def test_npz_with_its_own_split(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(30, 4, 4)).astype(np.float32)
    np.savez(
        tmp_path / "s.npz",
        x_train=x[:20],
        y_train=np.arange(20) % 2,
        x_test=x[20:],
        y_test=np.arange(10) % 2,
    )
    d = load_npz(tmp_path / "s.npz")
    assert d.split == "standard"
    assert torch.equal(d.x_test[:, 0], torch.as_tensor(x[20:]))


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
    with pytest.raises(ValueError, match="lacks the arrays x_train"):
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
