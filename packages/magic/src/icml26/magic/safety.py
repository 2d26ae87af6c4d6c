"""A blocklist scan: the game's text must stay abstract (no operational harmful content, no
personal data).

:func:`scan_text` flags quantities with units, substance and tool names that only operational
instructions need, procedural step markers, and personal data patterns (e-mail addresses,
phone numbers, identity numbers, street addresses, URLs). It is deliberately coarse: a
catalogue entry describes a request ("asks for step-by-step instructions to make an
explosive device") and never needs any of these. :func:`load_catalogue` users can call
:func:`scan_catalogue` on their own files; the tests scan everything the package ships.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from icml26.magic.intents import Catalogue

__all__ = ["BLOCKLIST", "PII_PATTERNS", "scan_catalogue", "scan_text"]

#: Words that operational instructions need and abstract descriptions never do (matched as
#: whole words, lower case).
BLOCKLIST: tuple[str, ...] = (
    # substances and precursors
    "nitrate",
    "peroxide",
    "thermite",
    "ricin",
    "sarin",
    "fentanyl",
    "methamphetamine",
    "ammonium",
    "chlorine",
    "cyanide",
    "arsenic",
    "precursor",
    "reagent",
    "solvent",
    # device and weapon parts
    "detonator",
    "fuse",
    "blasting",
    "suppressor",
    "silencer",
    "ammunition",
    "firing pin",
    "receiver",
    "gunpowder",
    # intrusion tooling
    "keylogger",
    "rootkit",
    "payload",
    "sql injection",
    "exploit code",
    "shellcode",
    "brute force",
    "password list",
    "phishing kit",
    "botnet",
    # procedure and dosage markers
    "step 1",
    "first, mix",
    "then heat",
    "dosage",
    "lethal dose",
    "milligrams",
    "grams",
)
_UNITS = r"(?:mg|g|kg|ml|l|mm|cm|oz|lb|%|degrees|°c|°f)"
#: Quantities with units ("20 g", "5ml") and personal data.
PII_PATTERNS: dict[str, str] = {
    "quantity": rf"\b\d+(?:[.,]\d+)?\s?{_UNITS}\b",
    "email": r"[\w.+-]+@[\w-]+\.[\w.]+",
    "phone": r"\+?\d[\d\s().-]{7,}\d",
    "id_number": r"\b\d{3}-\d{2}-\d{4}\b",
    "street_address": r"\b\d+\s+\w+\s+(?:street|st|avenue|ave|road|rd|lane|boulevard)\b",
    "url": r"https?://|www\.",
}


def scan_text(text: str) -> list[str]:
    """The reasons ``text`` is flagged (empty: clean)."""
    low = text.lower()
    hits = [f"blocklisted term {w!r}" for w in BLOCKLIST if re.search(rf"\b{re.escape(w)}\b", low)]
    hits += [f"{name} pattern" for name, pat in PII_PATTERNS.items() if re.search(pat, low)]
    return hits


def scan_catalogue(catalogue: Catalogue | Iterable[str]) -> dict[str, list[str]]:
    """``{entry: reasons}`` for every flagged description (or text) of ``catalogue``."""
    items = (
        [(it.id, it.description) for it in catalogue.intents]
        if isinstance(catalogue, Catalogue)
        else [(t, t) for t in catalogue]
    )
    return {key: r for key, text in items if (r := scan_text(text))}
