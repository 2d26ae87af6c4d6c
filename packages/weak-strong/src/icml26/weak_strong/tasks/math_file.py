"""The long real math stream shipped inside the wheel (``data/math_stream.json``).

Sampling SmolLM2-135M-Instruct on a CPU is slow (about 0.1-0.2 s per answer), so the long
stream is sampled once, offline, through :func:`~icml26.weak_strong.tasks.math.cached_samples`
and shipped as a small JSON file holding only what the stream needs:

* ``provenance``: model, dtype, seed, sampling settings, the prompt (instruction and the chat
  sent), the problem generator, the date, library versions, sampling time and the command
  that regenerates the file;
* ``problems``: per problem its question, exact answer, kind and the ``k`` final numbers
  extracted from the replies (``null`` for a reply with no number);
* ``items``: per sampled answer (problem-major, ``k`` per problem) the weak score
  (self-consistency: agreeing samples / ``k``, stored as the integer count) and the strong
  verdict (exact match, a ``"0"``/``"1"`` string);
* ``sha256``: the hash of the canonical JSON of the three parts above.

:func:`load_math_stream_file` checks the hash and that the items follow from the problems
(the same :func:`~icml26.weak_strong.tasks.math.agreement_scores` and exact match as the live
path), so a file that was edited by hand or truncated is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from icml26.shared import atomic_write_text
from icml26.weak_strong.streams import Stream
from icml26.weak_strong.tasks.answers import (
    INSTRUCTION,
    agreement_scores,
    conversation,
    extract_answer,
)

__all__ = [
    "FORMAT",
    "STREAM_FILE",
    "content_hash",
    "derive_items",
    "load_math_stream_file",
    "math_file_stream",
    "stream_file_content",
    "write_math_stream_file",
]

STREAM_FILE = "math_stream.json"
FORMAT = "icml26-weak-strong-math-stream/1"


def content_hash(content: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces) of the file's ``provenance``,
    ``problems`` and ``items``."""
    parts = {k: content[k] for k in ("provenance", "problems", "items")}
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def derive_items(problems: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """The per-item part from the per-problem answers: agreement counts and exact matches."""
    counts: list[int] = []
    correct: list[str] = []
    for i, p in enumerate(problems):
        answers = p["answers"]
        if len(answers) != k:
            raise ValueError(f"problem {i} has {len(answers)} answers, expected k = {k}")
        counts.extend(round(s * k) for s in agreement_scores(answers))
        correct.extend("1" if a is not None and a == int(p["answer"]) else "0" for a in answers)
    return {"agree": counts, "correct": "".join(correct)}


def stream_file_content(record: dict[str, Any], *, command: str) -> dict[str, Any]:
    """The shipped file's content from a samples record of
    :func:`~icml26.weak_strong.tasks.math.cached_samples` (replies reduced to final numbers)."""
    k = int(record["k"])
    problems = [
        {
            "question": p["question"],
            "answer": int(p["answer"]),
            "kind": p["kind"],
            "answers": [extract_answer(t) for t in p["replies"]],
        }
        for p in record["problems"]
    ]
    provenance = {
        "model": record["model"],
        "dtype": record.get("dtype", "default"),
        "device": "cpu",
        "seed": int(record["seed"]),
        "problems": len(problems),
        "k": k,
        "temperature": record["temperature"],
        "max_tokens": record["max_tokens"],
        "batch_size": record.get("batch_size"),
        **{
            key: record[key]
            for key in ("sample_seeds", "shard_problems", "shard_seeds", "sampler")
            if key in record
        },
        "problem_generator": f"icml26.weak_strong.tasks.math.make_problems({len(problems)}, "
        f"seed={int(record['seed'])})",
        "instruction": INSTRUCTION,
        "chat": conversation("<question>"),
        "chat_template": "the model tokenizer's own (SmolLM2: its default system prompt)",
        "weak_score": "self-consistency: share of the k samples with the same final number",
        "strong_verdict": "exact match of the final number with the known answer",
        "date": record.get("date"),
        "versions": record.get("versions", {}),
        "sampling_seconds": record.get("sampling_seconds"),
        "sampling_cpu_seconds": record.get("sampling_cpu_seconds"),
        "command": command,
    }
    content: dict[str, Any] = {
        "format": FORMAT,
        "provenance": provenance,
        "problems": problems,
        "items": derive_items(problems, k),
    }
    content["sha256"] = content_hash(content)
    return content


def write_math_stream_file(
    record: dict[str, Any], path: str | os.PathLike[str], *, command: str | None = None
) -> dict[str, Any]:
    """Write the shipped-stream file for ``record`` to ``path``; return its content."""
    content = stream_file_content(record, command=command or _regeneration_command(record))
    atomic_write_text(path, _layout(content))
    return content


def _layout(content: dict[str, Any]) -> str:
    """Compact, diff-friendly JSON: the provenance indented, one problem per line, the item
    arrays on one line each."""

    def one(obj: Any) -> str:
        return json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))

    problems = ",\n".join("  " + one(p) for p in content["problems"])
    items = ",\n".join(f"  {one(k)}:{one(v)}" for k, v in content["items"].items())
    provenance = json.dumps(content["provenance"], indent=2, ensure_ascii=True)
    return (
        "{\n"
        f'"format":{one(content["format"])},\n'
        f'"sha256":{one(content["sha256"])},\n'
        f'"provenance":{provenance},\n'
        f'"problems":[\n{problems}\n],\n'
        f'"items":{{\n{items}\n}}\n'
        "}\n"
    )


def _regeneration_command(record: dict[str, Any]) -> str:
    args = [
        "python",
        "-m",
        "icml26.weak_strong.tasks.math",
        "--problems",
        str(len(record["problems"])),
        "--samples",
        str(record["k"]),
        "--temperature",
        str(record["temperature"]),
        "--max-tokens",
        str(record["max_tokens"]),
        "--seed",
        str(record["seed"]),
        "--batch-size",
        str(record.get("batch_size", 16)),
    ]
    if "shard_problems" in record:
        args += ["--shard-problems", str(record["shard_problems"])]
    if record.get("dtype") not in (None, "default"):
        args += ["--dtype", str(record["dtype"])]
    args += ["--stream-out", f"src/icml26/weak_strong/data/{STREAM_FILE}"]
    return shlex.join(args)


def load_math_stream_file(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The shipped stream file (default: the one inside the package), checked: its format,
    its hash, and that its items follow from its problems."""
    if path is None:
        text = resources.files("icml26.weak_strong.data").joinpath(STREAM_FILE).read_text("utf-8")
        source = f"package file {STREAM_FILE}"
    else:
        text = Path(path).read_text(encoding="utf-8")
        source = str(path)
    content = json.loads(text)
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        raise ValueError(f"{source} is not a {FORMAT} file")
    if content_hash(content) != content.get("sha256"):
        raise ValueError(f"{source}: content does not match its sha256 (edited or truncated?)")
    prov = content["provenance"]
    if len(content["problems"]) != prov["problems"]:
        raise ValueError(
            f"{source}: {len(content['problems'])} problems, provenance says {prov['problems']}"
        )
    if derive_items(content["problems"], int(prov["k"])) != content["items"]:
        raise ValueError(f"{source}: items do not follow from the problems' answers")
    return content


def math_file_stream(path: str | os.PathLike[str] | None = None, *, name: str = "math") -> Stream:
    """The shipped stream as a :class:`~icml26.weak_strong.streams.Stream` (problem-major
    order, ``k`` items per problem; score = agreement share, label = exact match)."""
    content = load_math_stream_file(path)
    prov = content["provenance"]
    k = int(prov["k"])
    scores = np.asarray(content["items"]["agree"], dtype=np.float64) / k
    labels = np.frombuffer(content["items"]["correct"].encode("ascii"), dtype=np.uint8) == ord("1")
    answers = [a for p in content["problems"] for a in p["answers"]]
    meta = {
        "model": prov["model"],
        "problems": prov["problems"],
        "k": k,
        "unparsed_share": sum(a is None for a in answers) / len(answers),
        "sha256": content["sha256"],
        "source": str(path) if path is not None else f"package file {STREAM_FILE}",
    }
    return Stream(
        name,
        scores,
        labels,
        f"{prov['model']} answers ({prov['dtype']}), self-consistency over {k} samples",
        meta,
    )
