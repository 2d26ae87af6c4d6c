"""User records: WFDB and CSV, and bad input that errors clearly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml26.ecg_r1.labels import LEADS
from icml26.ecg_r1.records import RecordError, load_record, validate_record
from icml26.ecg_r1.wavemodel import sample_params, simulate


@pytest.fixture(scope="module")
def record() -> np.ndarray:
    rng = np.random.default_rng(0)
    return simulate(sample_params(rng, 1), rng).signals[0].astype(float)


def test_eleven_leads_fail(record: np.ndarray) -> None:
    with pytest.raises(RecordError, match="missing V6"):
        validate_record(record[:11], 200.0, list(LEADS[:11]))
    with pytest.raises(RecordError, match="12-lead"):
        validate_record(record[:11], 200.0)


def test_nan_samples_fail(record: np.ndarray) -> None:
    x = record.copy()
    x[3, 17] = np.nan
    with pytest.raises(RecordError, match=r"NaN.*aVR at sample 17"):
        validate_record(x, 200.0)


@pytest.mark.parametrize("fs", [None, 0.0, float("nan"), 20.0])
def test_unknown_sampling_rate_fails(record: np.ndarray, fs: float | None) -> None:
    with pytest.raises(RecordError, match="sampling rate"):
        validate_record(record, fs)


def test_csv_round_trip_reorders_leads(record: np.ndarray, tmp_path: Path) -> None:
    order = list(reversed(LEADS))
    path = tmp_path / "rec.csv"
    np.savetxt(path, record[::-1].T, delimiter=",", header=",".join(order), comments="")
    x, _fs = load_record(path, 200.0)
    np.testing.assert_allclose(x, record, atol=1e-6)
    with pytest.raises(RecordError, match="sampling rate"):
        load_record(path)


def test_wfdb_round_trip(record: np.ndarray, tmp_path: Path) -> None:
    import wfdb

    wfdb.wrsamp(
        "rec",
        fs=200,
        units=["mV"] * 12,
        sig_name=list(LEADS),
        p_signal=record.T,
        fmt=["16"] * 12,
        write_dir=str(tmp_path),
    )
    x, fs = load_record(tmp_path / "rec")
    assert fs == 200
    np.testing.assert_allclose(x, record, atol=2e-3)
    with pytest.raises(RecordError, match="WFDB header"):
        load_record(tmp_path / "missing")


def _wrsamp(tmp_path: Path, x: np.ndarray, units: str, name: str = "rec") -> Path:
    import wfdb

    wfdb.wrsamp(
        name,
        fs=200,
        units=[units] * 12,
        sig_name=list(LEADS),
        p_signal=x.T,
        fmt=["16"] * 12,
        write_dir=str(tmp_path),
    )
    return tmp_path / name


def test_wfdb_header_without_a_rate_fails(record: np.ndarray, tmp_path: Path) -> None:
    path = _wrsamp(tmp_path, record, "mV")
    header = path.with_suffix(".hea")
    lines = header.read_text().splitlines()
    assert lines[0].split() == ["rec", "12", "200", str(record.shape[1])]
    header.write_text("\n".join(["rec 12", *lines[1:]]) + "\n")  # no rate, no length
    with pytest.raises(RecordError, match=r"unknown sampling rate.*250 Hz"):
        load_record(path)


def test_wfdb_units_uv_convert_and_others_fail(record: np.ndarray, tmp_path: Path) -> None:
    x, _ = load_record(_wrsamp(tmp_path, record * 1000, "uV"))
    np.testing.assert_allclose(x, record, atol=2e-3)
    with pytest.raises(RecordError, match=r"'mmHg'.*mV or uV"):
        load_record(_wrsamp(tmp_path, record, "mmHg", "pressure"))


def test_a_record_in_uv_fails_the_amplitude_check(record: np.ndarray, tmp_path: Path) -> None:
    path = tmp_path / "uv.csv"
    np.savetxt(path, record.T * 1000, delimiter=",", header=",".join(LEADS), comments="")
    with pytest.raises(RecordError, match=r"peak to peak.*in mV"):
        load_record(path, 200.0)
    with pytest.raises(RecordError, match="peak to peak"):
        validate_record(record * 1000, 200.0)
    validate_record(record, 200.0)  # the simulator's mV pass


def test_report_rejects_bad_records_before_loading_the_model(
    record: np.ndarray, tmp_path: Path
) -> None:
    import wfdb

    from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder
    from icml26.ecg_r1.report import interpret_record

    encoders = (SignalEncoder().eval(), ImageEncoder().eval())
    with pytest.raises(FileNotFoundError, match="no saved model"):
        interpret_record(tmp_path / "none", tmp_path / "rec", encoders)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    wfdb.wrsamp(
        "eleven",
        fs=200,
        units=["mV"] * 11,
        sig_name=list(LEADS[:11]),
        p_signal=record[:11].T,
        fmt=["16"] * 11,
        write_dir=str(tmp_path),
    )
    with pytest.raises(RecordError, match="missing V6"):
        interpret_record(model, tmp_path / "eleven", encoders)
    csv = tmp_path / "nan.csv"
    x = record.copy()
    x[0, 5] = np.nan
    np.savetxt(csv, x.T, delimiter=",", header=",".join(LEADS), comments="")
    with pytest.raises(RecordError, match="NaN"):
        interpret_record(model, csv, encoders, fs=200.0)
    with pytest.raises(RecordError, match="sampling rate"):
        interpret_record(model, csv, encoders)


def test_short_record_is_delineated_on_its_real_samples_only(record: np.ndarray) -> None:
    from icml26.ecg_r1.delineate import measure_features
    from icml26.ecg_r1.report import record_features, resample_10s

    short = record[:, :1000]  # 5 s at 200 Hz
    x200, padded_s = resample_10s(short, 200.0)
    assert x200.shape == (12, 2000)
    assert padded_s == pytest.approx(5.0)
    out = record_features(x200, padded_s)
    assert out["padded_s"] == pytest.approx(5.0)
    assert out["duration_s"] == pytest.approx(5.0)
    expected = measure_features(short.astype(np.float32), 200.0).as_dict()
    assert out["measured_features"] == pytest.approx(expected)
    full, none = resample_10s(record, 200.0)
    assert none == 0.0
    assert record_features(full, none)["padded_s"] == 0.0


def test_short_record_delineation_error_names_the_duration(record: np.ndarray) -> None:
    from icml26.ecg_r1.report import record_features, resample_10s

    flat = np.zeros((12, 700))  # 3.5 s of a flat line
    out = record_features(*resample_10s(flat, 200.0))
    assert out["measured_features"] is None
    assert "3.5 s of real samples" in out["delineation_error"]


def test_encoders_round_trip_through_the_model_folder(tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file

    from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder, load_encoders, save_encoders

    torch.manual_seed(0)
    se, ie = SignalEncoder(width=32, n_tokens=4).eval(), ImageEncoder(width=32, n_tokens=4).eval()
    path = save_encoders(tmp_path, se, ie)
    assert path.name == "encoders.safetensors"
    assert any(k.startswith("signal.") for k in load_file(str(path)))  # a real safetensors file
    se2, ie2 = load_encoders(tmp_path)
    assert (se2.width, ie2.n_tokens) == (32, 4)
    assert not se2.training
    x = torch.randn(2, 12, 1000)
    torch.testing.assert_close(se2(x).readout, se(x).readout)
    img = torch.rand(2, 96, 256)
    torch.testing.assert_close(ie2(img).tokens, ie(img).tokens)
    with pytest.raises(FileNotFoundError, match=r"no encoders\.safetensors"):
        load_encoders(tmp_path / "empty")
