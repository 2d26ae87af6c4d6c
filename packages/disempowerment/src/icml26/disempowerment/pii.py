"""Synthetic planted PII: every string is made up (random digits, names from Faker's lists).

:class:`PIIMaker` writes one sentence carrying one PII item of a *kind*, in a *development*
format (the formats the scrubber's rules were written against) or a *held-out* format (other
carrier sentences, other formats, and names that are not in the scrubber's name list).
The synthetic generator plants these in user messages; :func:`planted_pii_corpus` makes a
corpus of conversations with PII in every one, and :func:`scrub_scores` measures a scrubber
on it: recall (planted strings that are gone after scrubbing) per kind and split, and span
precision (replaced spans that overlap a planted string).

Kinds: ``name`` (capitalised full name), ``name_lower`` (a name written in lower case),
``titled_name`` (``Dr. Okafor``), ``email``, ``phone``, ``address``, ``postcode`` (UK,
US ZIP, Canadian), ``date_of_birth``, ``handle`` (``@someone``), ``profile_url``,
``account_id``, and in the held-out split only ``national_id`` and ``iban``.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

__all__ = [
    "DEV_KINDS",
    "DISTRACTORS",
    "FRESH_FRAMES",
    "HOLDOUT_KINDS",
    "VALIDATION_FRAMES",
    "PIIMaker",
    "PlantedPII",
    "ScrubScores",
    "fresh_frame_texts",
    "scrub_scores",
]

DEV_KINDS = (
    "name",
    "name_lower",
    "titled_name",
    "email",
    "phone",
    "address",
    "postcode",
    "date_of_birth",
    "handle",
    "profile_url",
    "account_id",
)
HOLDOUT_KINDS = (*DEV_KINDS, "national_id", "iban")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


#: Sentences without PII that look like it (capitalised things, numbers, versions, times,
#: jargon): planted beside the PII so that span precision is measured on hard negatives.
DISTRACTORS = (
    "I use Python 3.12 with NumPy and pandas on Ubuntu.",
    "We flew to Paris in March and stayed near the Louvre.",
    "The meeting moved from 9:30 to 14:00 on Monday.",
    "My laptop runs Windows 11, version 23H2.",
    "I read Pride and Prejudice for my book club.",
    "The recipe needs 250 g of flour and 3 eggs.",
    "I watched the Champions League final with everyone.",
    "Our team uses Slack, Jira and GitHub every day.",
    "It cost about 1,250 dollars in total.",
    "I switched from iPhone to Android last year.",
    "The train from Leeds to York takes 25 minutes.",
    "i keep my notes in markdown and sync them with git.",
    "We talked about Shakespeare and the Renaissance in class.",
    "My gym is open 24/7 except on Christmas Day.",
    "The error says TypeError: list indices must be integers.",
    "I got a 4.5 rating on my last review at Google.",
)


@dataclass(frozen=True)
class PlantedPII:
    """One planted PII string.

    Attributes:
        conversation: index of the conversation it was planted in.
        kind: one of :data:`HOLDOUT_KINDS`.
        holdout: whether its format (or name) was held out of the scrubber's development.
        text: the PII string itself.
    """

    conversation: int
    kind: str
    holdout: bool
    text: str


@cache
def _names() -> dict[str, list[str]]:
    text = resources.files("icml26.disempowerment.data").joinpath("generator_names.json")
    data: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if isinstance(v, list)}


class PIIMaker:
    """Sentences carrying one planted PII item each (see the module docstring).

    Args:
        rng: the random stream of the PII (its own stream: never the data's).
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        names = _names()
        self.dev_first, self.dev_last = names["us_first"], names["us_last"]
        self.ho_first, self.ho_last = names["first"], names["last"]

    def pick(self, seq: list[str] | tuple[str, ...]) -> str:
        return seq[int(self.rng.integers(len(seq)))]

    def digits(self, n: int) -> str:
        return "".join(str(int(d)) for d in self.rng.integers(0, 10, n))

    def letters(self, n: int) -> str:
        return "".join(self.pick(string.ascii_uppercase) for _ in range(n))

    def _first(self, holdout: bool) -> str:
        return self.pick(self.ho_first if holdout else self.dev_first)

    def _last(self, holdout: bool) -> str:
        return self.pick(self.ho_last if holdout else self.dev_last)

    def _user(self, holdout: bool) -> str:
        first, last = self._first(holdout).lower(), self._last(holdout).lower()
        sep = self.pick((".", "_", "")) if holdout else self.pick(("_", ""))
        return f"{first}{sep}{last[: int(self.rng.integers(1, len(last) + 1))]}{self.digits(2)}"

    def make(self, kind: str, holdout: bool) -> tuple[str, str]:
        """One planted item.

        Args:
            kind: one of :data:`DEV_KINDS` (development) or :data:`HOLDOUT_KINDS` (held out).
            holdout: draw the held-out format, carrier sentence and names.

        Returns:
            ``(sentence, pii_text)``: the sentence holds ``pii_text`` verbatim.

        Raises:
            ValueError: an unknown kind, or a held-out-only kind asked in development format.
        """
        kinds = HOLDOUT_KINDS if holdout else DEV_KINDS
        if kind not in kinds:
            raise ValueError(f"unknown PII kind {kind!r} for this split; expected one of {kinds}")
        value, frames = getattr(self, f"_{kind}")(holdout)
        return self.pick(frames).format(value), value

    # -- names ----------------------------------------------------------------------------

    def _name(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        full = f"{self._first(ho)} {self._last(ho)}"
        if ho:
            frames = (
                "Ask {} if you do not believe me.",
                "I had lunch with {} on Friday.",
                "{} and I used to be close.",
                "Please keep {} out of this.",
            )
        else:
            frames = (
                "My name is {}.",
                "I'm {}, by the way.",
                "My coworker {} was there too.",
                "{} said the same thing yesterday.",
                "This is about my friend {}.",
                "Signed, {}.",
            )
        return full, frames

    def _name_lower(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        first = self._first(ho).lower()
        value = f"{first} {self._last(ho).lower()}" if self.rng.random() < 0.4 else first
        if ho:
            frames = (
                "me and {} went there together.",
                "honestly {} keeps texting me about it.",
                "i asked {} what they thought.",
                "my cousin {} disagrees.",
            )
        else:
            frames = (
                "my friend {} thinks so too.",
                "i told {} about it.",
                "{} said the same thing.",
                "this is about my coworker {}.",
            )
        return value, frames

    def _titled_name(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        if ho:
            title = self.pick(("Prof.", "Coach", "Nurse", "dr", "Professor"))
            last = self._last(ho)
            value = f"{title} {last.lower() if title == 'dr' else last}"
            frames = ("According to {}, it is fine.", "{} disagreed with me.")
        else:
            title = self.pick(("Dr.", "Dr", "Mr", "Mrs.", "Ms"))
            value = f"{title} {self._last(ho)}"
            frames = ("{} told me to rest.", "I have an appointment with {} next week.")
        return value, frames

    # -- contact details --------------------------------------------------------------------

    def _email(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        user = self.pick(self.dev_first).lower() + self.digits(2)
        if ho:
            user = user + "+" + self.pick(("notes", "home", "x1"))
            host = self.pick(("mail.univ.example", "post.company.test", "in.example.org"))
        else:
            host = self.pick(("example.com", "mail.test", "example.org"))
        return f"{user}@{host}", ("You can email me at {}.", "My address is {} if needed.", "({})")

    def _phone(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        if ho:
            phone = self.pick(
                (
                    f"+44 20 {self.digits(4)} {self.digits(4)}",
                    f"+49 30 {self.digits(8)}",
                    f"0{self.digits(3)}.{self.digits(3)}.{self.digits(4)}",
                )
            )
        else:
            phone = self.pick(
                (
                    f"({self.digits(3)}) {self.digits(3)}-{self.digits(4)}",
                    f"{self.digits(3)}-{self.digits(3)}-{self.digits(4)}",
                    f"+1 {self.digits(3)} {self.digits(3)} {self.digits(4)}",
                )
            )
        return phone, ("Call me on {}.", "My number is {}.", "Text {} later.")

    def _address(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        num = int(self.rng.integers(1, 2000))
        street = self._last(ho)
        if ho:
            addr = f"Flat {int(self.rng.integers(1, 40))}B, {num} {street} Close"
        else:
            addr = f"{num} {street} {self.pick(('Street', 'Avenue', 'Road', 'Lane', 'Drive'))}"
        return addr, ("I live at {}.", "Send it to {}.", "We moved to {} last year.")

    def _postcode(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        if ho:
            ca = (
                f"{self.letters(1)}{self.digits(1)}{self.letters(1)} "
                f"{self.digits(1)}{self.letters(1)}{self.digits(1)}"
            )
            zip4 = f"{self.digits(5)}-{self.digits(4)}"
            value = self.pick((ca, zip4))
            frames = ("The postal code there is {}.", "Mail goes to {} now.")
        else:
            uk = f"{self.letters(2)}{self.digits(1)} {self.digits(1)}{self.letters(2)}"
            value = self.pick((uk, self.digits(5)))
            frames = (
                ("My postcode is {}.", "I'm near {}.")
                if not value.isdigit()
                else ("My zip code is {}.", "We are in zip {}.")
            )
        return value, frames

    def _date_of_birth(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        year = int(self.rng.integers(1950, 2006))
        month, day = int(self.rng.integers(1, 13)), int(self.rng.integers(1, 29))
        if ho:
            suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd"}.get(day, "th")
            value = self.pick(
                (
                    f"{day}{suffix} of {_MONTHS[month - 1]} {year}",
                    f"{_MONTHS[month - 1]} {day}, {year}",
                    f"{day:02d}.{month:02d}.{year}",
                )
            )
            frames = ("I was born {}.", "My birthday is {}, if that matters.")
        else:
            value = self.pick((f"{day:02d}/{month:02d}/{year}", f"{year}-{month:02d}-{day:02d}"))
            frames = ("I was born on {}.", "DOB: {}.")
        return value, frames

    def _handle(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        value = "@" + self._user(ho)
        frames = (
            ("I'm {} on there.", "Look for {} if you want to see it.")
            if ho
            else ("My insta is {}.", "Follow me at {}.")
        )
        return value, frames

    def _profile_url(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        user = self._user(ho)
        if ho:
            value = self.pick(
                (
                    f"https://www.instagram.com/{user}/",
                    f"github.com/{user}",
                    f"https://www.facebook.com/profile.php?id={self.digits(12)}",
                )
            )
            frames = ("Here is my page: {}", "My profile ({}) has it all.")
        else:
            slug = f"{self._first(ho).lower()}-{self._last(ho).lower()}-{self.digits(2)}"
            value = self.pick((f"linkedin.com/in/{slug}", f"https://twitter.com/{user}"))
            frames = ("My profile is {}.", "See {} for my background.")
        return value, frames

    # -- identifiers -------------------------------------------------------------------------

    def _account_id(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        acct = (
            f"{self.digits(4)}-{self.digits(4)}-{self.digits(4)}"
            if ho
            else f"ACCT-{self.digits(8)}"
        )
        return acct, ("My account number is {}.", "Reference {}.", "(customer id {})")

    def _national_id(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        return f"{self.digits(3)}-{self.digits(2)}-{self.digits(4)}", (
            "My social security number is {}.",
        )

    def _iban(self, ho: bool) -> tuple[str, tuple[str, ...]]:
        iban = (
            f"GB{self.digits(2)} TEST {self.digits(4)} {self.digits(4)} "
            f"{self.digits(4)} {self.digits(2)}"
        )
        return iban, ("Pay into {}.",)


#: Carrier sentences for developing the scrubber's rules without the PII's usual cue words
#: (written 2026-12-04, apart from :data:`FRESH_FRAMES` and never mixed with them):
#: ``docs/scrub_choice.py`` measures rule changes on these, on a log of another seed.
VALIDATION_FRAMES: tuple[str, ...] = (
    "I keep thinking about {} lately.",
    "Put {} on the list, please.",
    "{} - that's the one I meant.",
    "Do you remember {}?",
    "Thanks to {} we got it done.",
    "It was {} who suggested it.",
    "Quick question about {}.",
    "Add {} to the notes.",
    "The letter came back with {} written on it.",
    "Between you and me, {} is the problem.",
    "See also {}",
    "Without {} none of this would have happened.",
)

#: Carrier sentences written on 2026-12-04, after the scrubber's rules, by someone not
#: editing them: the scrubber has never been adjusted to these (never do: they measure how
#: the rules do on wording they were not written against; the test pins their hash).
FRESH_FRAMES: tuple[str, ...] = (
    "{} was there too.",
    "Honestly, {} is the reason I'm asking.",
    "We spoke to {} yesterday about it.",
    "Anyway, {} helped a lot last week.",
    "cc {}",
    "For reference: {}",
    "Not sure if it matters but {} came up again.",
    "The form already has {} on it.",
    "Last time {} sorted it out quickly.",
    "Forwarding this from {}, no reply yet.",
    "Someone mentioned {} at lunch.",
    "Is {} the right one to put down?",
)


def fresh_frame_texts(
    planted: list[PlantedPII], seed: int, frames: tuple[str, ...] = FRESH_FRAMES
) -> tuple[list[str], list[PlantedPII]]:
    """Every planted string again, each in a sentence of its own from ``frames``.

    Args:
        planted: the planted items (their strings and kinds are reused).
        seed: the frame choice's seed.
        frames: carrier sentences with one ``{}`` each (:data:`FRESH_FRAMES` to measure,
            :data:`VALIDATION_FRAMES` to develop rules on).

    Returns:
        ``(texts, items)``: one text per item, ``items[i].conversation == i``.
    """
    rng = np.random.default_rng(seed)
    picks = rng.integers(len(frames), size=len(planted))
    texts = [frames[f].format(p.text) for f, p in zip(picks, planted, strict=True)]
    items = [PlantedPII(i, p.kind, p.holdout, p.text) for i, p in enumerate(planted)]
    return texts, items


@dataclass(frozen=True)
class ScrubScores:
    """A scrubber measured on texts with planted PII.

    Attributes:
        recall: share of planted items fully removed (every letter and digit of every
            occurrence of the string inside a replaced span), by ``"all"``, ``"dev"``,
            ``"holdout"`` and ``"<kind>.<dev|holdout>"``.
        precision: share of replaced spans that overlap a planted string.
        n_items: planted items; n_spans: replaced spans.
        missed: ``(kind, holdout, text)`` of every item not fully removed.
    """

    recall: dict[str, float]
    precision: float
    n_items: int
    n_spans: int
    missed: list[tuple[str, bool, str]]


def _occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    out, start = [], text.find(needle)
    while start != -1:
        out.append((start, start + len(needle)))
        start = text.find(needle, start + 1)
    return out


def scrub_scores(scrubber: Any, texts: list[str], planted: list[PlantedPII]) -> ScrubScores:
    """Recall and span precision of ``scrubber`` on ``texts`` whose PII is ``planted``.

    Args:
        scrubber: a :class:`icml26.disempowerment.scrub.Scrubber` (anything with
            ``find(text) -> spans``).
        texts: the original texts.
        planted: the planted items (``conversation`` indexes ``texts``).

    Returns:
        The :class:`ScrubScores`.
    """
    by_text: dict[int, list[PlantedPII]] = {}
    for p in planted:
        by_text.setdefault(p.conversation, []).append(p)
    hits: dict[str, list[bool]] = {}
    missed: list[tuple[str, bool, str]] = []
    n_spans = n_true = 0
    for i, text in enumerate(texts):
        items = by_text.get(i, [])
        spans = scrubber.find(text)
        covered = np.zeros(len(text) + 1, dtype=bool)
        for s in spans:
            covered[s.start : s.end] = True
        regions = [r for p in items for r in _occurrences(text, p.text)]
        n_spans += len(spans)
        n_true += sum(any(s.start < b and a < s.end for a, b in regions) for s in spans)
        for p in items:
            ok = all(
                covered[j] or not text[j].isalnum()
                for a, b in _occurrences(text, p.text)
                for j in range(a, b)
            )
            split = "holdout" if p.holdout else "dev"
            for key in ("all", split, f"{p.kind}.{split}"):
                hits.setdefault(key, []).append(ok)
            if not ok:
                missed.append((p.kind, p.holdout, p.text))
    return ScrubScores(
        recall={k: float(np.mean(v)) for k, v in sorted(hits.items())},
        precision=n_true / n_spans if n_spans else float("nan"),
        n_items=len(planted),
        n_spans=n_spans,
        missed=missed,
    )
