"""PII scrubbing before any model sees text: offline rules plus a shipped name list.

Each detector replaces what it finds by a typed placeholder (``[EMAIL]``, ``[PHONE]``,
``[ADDRESS]``, ``[ID]``, ``[NAME]``), in this order: e-mail addresses, IBAN-like account
numbers, street addresses, prefixed ids, digit runs (phone numbers, account and national
ids: at least 7 digits with separators), then person names by three rules: (1) a capitalised
word from the name list (Faker's en_US given names and surnames, common English words
removed), together with a capitalised word next to it; (2) capitalised words after a
context phrase ("my name is", "I'm", "my coworker", "signed,", ...); (3) two or more
consecutive capitalised words that are not sentence openers or known words.

``scrubadub`` was not used: its 2.0.1 release pins ``textblob==0.15.3`` and its name detector
needs corpora that cannot be fetched offline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

__all__ = ["PLACEHOLDERS", "ScrubStats", "Scrubber", "scrub_text"]

PLACEHOLDERS = ("[EMAIL]", "[PHONE]", "[ADDRESS]", "[ID]", "[NAME]")

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b")
_STREET = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Close|Court|Ct|Way|Boulevard|Blvd|"
    r"Place|Pl|Terrace|Crescent|Square|Row|Gardens|Grove|Parkway|Highway|Hwy)"
)
_ADDRESS = re.compile(
    r"(?:\b(?:Flat|Apt\.?|Apartment|Unit|Suite)\s+\w+,?\s+)?"
    r"\b\d{1,5}[A-Za-z]?\s+(?:[A-Z][a-z]+\s+){1,3}" + _STREET + r"\b\.?"
)
_PREFIXED_ID = re.compile(r"\b[A-Z]{2,6}[-_#]?\d{5,}\b")
_DIGIT_RUN = re.compile(r"(?<![\w])\+?\(?\d[\d\s().-]{5,}\d(?![\w])")
_CAP = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"
_CONTEXT = re.compile(
    r"(?i:\b(?:my name is|i am|i'm|this is|call me|signed,?|regards,?|cheers,?|"
    r"my (?:friend|coworker|co-worker|colleague|boss|manager|sister|brother|partner|wife|"
    r"husband|mother|father|mom|mum|dad|neighbou?r|roommate|son|daughter|cousin|aunt|uncle)))"
    r"\s+(" + _CAP + r"(?:\s+" + _CAP + r")?)"
)
_CAP_RUN = re.compile(r"\b(" + _CAP + r")((?:\s+" + _CAP + r")+)\b")
_WORD = re.compile(r"\b" + _CAP + r"\b")

#: Capitalised words that open sentences or are names of things, never taken as names.
_NOT_NAMES = frozenset(
    [
        "I",
        "I'm",
        "I've",
        "I'd",
        "I'll",
        "A",
        "An",
        "The",
        "This",
        "That",
        "These",
        "Those",
        "It",
        "Its",
        "It's",
        "He",
        "She",
        "We",
        "They",
        "You",
        "Your",
        "My",
        "Our",
        "His",
        "Her",
        "Their",
        "Hi",
        "Hey",
        "Hello",
        "Dear",
        "Okay",
        "Ok",
        "So",
        "And",
        "But",
        "Or",
        "If",
        "When",
        "While",
        "Then",
        "Also",
        "Still",
        "Yes",
        "No",
        "Not",
        "Do",
        "Does",
        "Did",
        "Is",
        "Are",
        "Was",
        "Were",
        "Be",
        "Been",
        "Can",
        "Could",
        "Would",
        "Should",
        "Will",
        "Shall",
        "May",
        "Might",
        "Must",
        "Please",
        "Thanks",
        "Thank",
        "Sorry",
        "Sure",
        "Well",
        "Now",
        "Here",
        "There",
        "What",
        "Why",
        "How",
        "Who",
        "Where",
        "Which",
        "Long",
        "Quick",
        "Good",
        "Morning",
        "Evening",
        "Night",
        "Honestly",
        "Just",
        "Tell",
        "Write",
        "Decide",
        "Give",
        "Draft",
        "Send",
        "Copy",
        "Call",
        "Text",
        "Pay",
        "Reference",
        "Signed",
        "Regards",
        "Cheers",
        "Something",
        "Everything",
        "Nothing",
        "Anyone",
        "Everyone",
        "Someone",
        "Nobody",
        "Deep",
        "Sometimes",
        "Relationships",
        "Rather",
        "Only",
        "One",
        "Many",
        "People",
        "Whatever",
        "From",
        "Of",
        "Let",
        "Start",
        "Check",
        "Compare",
        "Try",
        "Writing",
        "Reading",
        "Constraints",
        "Small",
        "Setting",
        "Tracking",
        "Keeping",
        "Without",
        "Anyone",
        "Never",
        "Trust",
        "Yes",
        "Their",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
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
        "Christmas",
        "Easter",
        "English",
        "CI",
        "SQL",
        "Flat",
        "Apt",
        "Unit",
        "Suite",
        "Street",
        "Avenue",
        "Road",
        "Lane",
        "Drive",
        "Close",
        "Court",
        "Way",
        "My",
        "Talking",
        "Everything",
        "Ask",
        "Am",
        "User",
        "Assistant",
    ]
)


@cache
def _name_list() -> frozenset[str]:
    text = resources.files("icml26.disempowerment.data").joinpath("scrubber_names.txt")
    lines = text.read_text(encoding="utf-8").splitlines()
    return frozenset(ln.strip() for ln in lines if ln.strip() and not ln.startswith("#"))


@dataclass
class ScrubStats:
    """How many replacements of each kind a scrubber made."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PLACEHOLDERS, 0))

    def add(self, placeholder: str, n: int) -> None:
        self.counts[placeholder] = self.counts.get(placeholder, 0) + n

    def merge(self, other: ScrubStats) -> None:
        for k, v in other.counts.items():
            self.add(k, v)


class Scrubber:
    """Rule-based PII scrubber (see the module docstring).

    Args:
        extra_names: more names to treat like the shipped list (a user's own roster).
    """

    def __init__(self, extra_names: Iterable[str] = ()) -> None:
        self.names = _name_list() | frozenset(extra_names)
        self.stats = ScrubStats()

    def _sub(self, pattern: re.Pattern[str], placeholder: str, text: str) -> str:
        out, n = pattern.subn(placeholder, text)
        if n:
            self.stats.add(placeholder, n)
        return out

    def _digits(self, text: str) -> str:
        def repl(m: re.Match[str]) -> str:
            s = m.group(0)
            if sum(ch.isdigit() for ch in s) < 7:
                return s
            self.stats.add("[PHONE]", 1)
            return "[PHONE]"

        return _DIGIT_RUN.sub(repl, text)

    def _names(self, text: str) -> str:
        names = self.names

        def context(m: re.Match[str]) -> str:
            words = m.group(1).split()
            keep = [w for w in words if w in _NOT_NAMES]
            if keep and len(keep) == len(words):
                return m.group(0)
            self.stats.add("[NAME]", 1)
            return m.group(0)[: m.start(1) - m.start(0)] + "[NAME]"

        text = _CONTEXT.sub(context, text)

        def run(m: re.Match[str]) -> str:
            words = m.group(0).split()
            named = [w not in _NOT_NAMES for w in words]
            if sum(named) >= 2 or any(w in names for w in words if w not in _NOT_NAMES):
                # keep a leading opener ("So Priya Nair" -> "So [NAME]")
                lead = []
                while words and words[0] in _NOT_NAMES:
                    lead.append(words.pop(0))
                self.stats.add("[NAME]", 1)
                return " ".join([*lead, "[NAME]"])
            return m.group(0)

        text = _CAP_RUN.sub(run, text)

        def single(m: re.Match[str]) -> str:
            w = m.group(0)
            if w in names and w not in _NOT_NAMES:
                self.stats.add("[NAME]", 1)
                return "[NAME]"
            return w

        return _WORD.sub(single, text)

    def __call__(self, text: str) -> str:
        """``text`` with every detected PII span replaced by its placeholder."""
        text = self._sub(_EMAIL, "[EMAIL]", text)
        text = self._sub(_IBAN, "[ID]", text)
        text = self._sub(_ADDRESS, "[ADDRESS]", text)
        text = self._sub(_PREFIXED_ID, "[ID]", text)
        text = self._digits(text)
        return self._names(text)


def scrub_text(text: str) -> str:
    """Scrub one string with a default :class:`Scrubber`."""
    return Scrubber()(text)
