from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.shared.configs import OverrideError, apply_overrides, config_fields, config_to_dict


@dataclass(frozen=True)
class Model:
    width: int = 32
    activation: Literal["tanh", "relu"] = "tanh"


@dataclass(frozen=True)
class Config:
    seed: int = 0
    lr: float = 1e-3
    use_damping: bool = False
    systems: tuple[str, ...] = ("fput", "wave")
    horizons: tuple[int, int] = (1, 5)
    checkpoint: Path | None = None
    note: str = ""
    model: Model = field(default_factory=Model)

    def __post_init__(self) -> None:
        if self.lr <= 0:
            raise ValueError("lr must be positive")


def test_overrides_parse_by_annotation() -> None:
    cfg = apply_overrides(
        Config(),
        [
            "seed=3",
            "lr=0.5",
            "use_damping=yes",
            "systems=fput,pendulum,wave",
            "horizons=[2, 10]",
            "checkpoint=/tmp/x.npz",
            "note=a=b",
            "model.width=64",
            "model.activation=relu",
        ],
    )
    assert cfg == Config(
        seed=3,
        lr=0.5,
        use_damping=True,
        systems=("fput", "pendulum", "wave"),
        horizons=(2, 10),
        checkpoint=Path("/tmp/x.npz"),
        note="a=b",
        model=Model(64, "relu"),
    )
    assert apply_overrides(cfg, ["checkpoint=none"]).checkpoint is None


@given(st.integers(-(10**9), 10**9))
def test_integer_round_trip(n: int) -> None:
    assert apply_overrides(Config(), [f"seed={n}"]).seed == n


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("epochs=3", "unknown config field 'epochs'"),
        ("seed=three", "not an integer"),
        ("lr=fast", "not a number"),
        ("use_damping=maybe", "not a boolean"),
        ("horizons=1,2,3", "expected 2 values"),
        ("model.activation=gelu", "not one of tanh, relu"),
        ("model=3", "group of fields"),
        ("seed.x=1", "has no sub-fields"),
        ("lr=-1", "lr must be positive"),
        ("seed", "must look like field=value"),
    ],
)
def test_bad_overrides_name_the_problem(override: str, message: str) -> None:
    with pytest.raises(OverrideError, match=message):
        apply_overrides(Config(), [override])


@dataclass(frozen=True)
class Paired:
    mode: Literal["synthetic", "file"] = "synthetic"
    path: str = ""

    def __post_init__(self) -> None:
        if self.mode == "file" and not self.path:
            raise ValueError("mode=file needs a path")


def test_cross_field_checks_see_all_overrides_in_any_order() -> None:
    assert apply_overrides(Paired(), ["mode=file", "path=x.csv"]) == Paired("file", "x.csv")
    assert apply_overrides(Paired(), ["path=x.csv", "mode=file"]) == Paired("file", "x.csv")
    assert apply_overrides(Config(), ["seed=1", "seed=2"]).seed == 2
    with pytest.raises(OverrideError, match="mode=file needs a path"):
        apply_overrides(Paired(), ["mode=file"])


def test_config_to_dict_and_fields() -> None:
    d = config_to_dict(Config())
    assert d["model"] == {"width": 32, "activation": "tanh"}
    assert d["systems"] == ["fput", "wave"]
    names = [name for name, _, _ in config_fields(Config())]
    assert "model.width" in names
    assert "seed" in names
    with pytest.raises(TypeError):
        config_to_dict({"a": 1})
