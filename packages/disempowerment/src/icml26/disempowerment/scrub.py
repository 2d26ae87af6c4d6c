"""PII scrubbing before any model sees text: offline rules, a name list and a word list.

:meth:`Scrubber.find` returns the PII spans of a text (start, end, placeholder) on the text as
given; calling the scrubber replaces each span by its typed placeholder. Detectors run in this
order, each on what the earlier ones left (a found span is masked, so spans never overlap):

1. ``[URL]``: web addresses (``https://...``, ``www....``) and profile paths on social sites
   (``linkedin.com/in/...``);
2. ``[EMAIL]``; 3. ``[HANDLE]``: ``@name`` handles;
4. ``[ID]``: IBAN-like account numbers;
5. ``[DATE]``: full dates (day, month and year: ``14/03/1987``, ``1987-03-14``,
   ``3 March 1987``, ``March 3, 1987``); a month with a year alone is kept;
6. ``[ADDRESS]``: street addresses (a number, up to three words, a street type);
7. ``[POSTCODE]``: UK and Canadian postcodes, US ZIP codes after ``zip``/``postcode`` or a
   state code, and any five-digit number standing alone (not money, a decimal or a
   percentage: a bare ZIP code; other five-digit counts are removed too);
8. ``[ID]``: prefixed ids (``ACCT-12345678``); 9. ``[PHONE]``: digit runs of at least 7
   digits with separators (phones, account and national ids);
10. ``[NAME]``: a title and a name (``Dr. Okafor``, ``dr okafor``); capitalised words after a
    context phrase (``my name is``, ``my friend``, ``signed,``) or lower-case words there that
    are not English words; runs of two or more capitalised words that are not sentence
    openers; a capitalised word from the name list; anywhere, a lower-case word that is not an
    English word (British spellings and hyphenated compounds of English words count as
    English; typos and jargon are removed too, the price of catching names no list holds),
    with a known name beside it, and two known names in a row.

The last three rules were chosen on :data:`~icml26.disempowerment.pii.VALIDATION_FRAMES`
(``docs/scrub_choice.py``), never on the evaluation wording
:data:`~icml26.disempowerment.pii.FRESH_FRAMES`.

The name list is Faker's en_US given names and surnames (common English words removed); the
English word list is web2 (Webster's Second International, public domain, from the
``english-words`` package), lower-case entries only, with simple inflections
(``-s``, ``-es``, ``-ed``, ``-ing``, ``'s``) and a short list of modern words added.
``scrubadub`` was not used: its 2.0.1 release pins ``textblob==0.15.3`` and its name detector
needs corpora that cannot be fetched offline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

__all__ = ["PLACEHOLDERS", "ScrubStats", "Scrubber", "Span", "english_words", "scrub_text"]

PLACEHOLDERS = (
    "[URL]",
    "[EMAIL]",
    "[HANDLE]",
    "[ID]",
    "[DATE]",
    "[ADDRESS]",
    "[POSTCODE]",
    "[PHONE]",
    "[NAME]",
)
_MASK = "\x00"

_URL = re.compile(
    r"(?i)(?:\bhttps?://|\bwww\.)[^\s<>\"']+"
    r"|\b(?:[a-z0-9-]+\.)*(?:linkedin|twitter|x|instagram|facebook|fb|github|gitlab|tiktok|"
    r"reddit|youtube|medium|threads|bsky|mastodon)\.(?:com|net|org|app|social)/[^\s<>\"']+"
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_HANDLE = re.compile(r"(?<![\w@.])@[A-Za-z0-9_](?:[A-Za-z0-9_.]*[A-Za-z0-9_])?")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b")
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE = re.compile(
    r"(?i)\b(?:"
    r"\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})"  # 14/03/1987, 03.14.87
    r"|(?:1[89]|20)\d{2}[/.-]\d{1,2}[/.-]\d{1,2}"  # 1987-03-14
    r"|\d{1,2}(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH + r",?\s+\d{4}"  # 3rd of March 1987
    r"|" + _MONTH + r"\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}"  # March 3, 1987
    r")\b"
)
_STREET = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Close|Court|Ct|Way|Boulevard|Blvd|"
    r"Place|Pl|Terrace|Crescent|Square|Row|Gardens|Grove|Parkway|Highway|Hwy)"
)
_ADDRESS = re.compile(
    r"(?:\b(?:Flat|Apt\.?|Apartment|Unit|Suite)\s+\w+,?\s+)?"
    r"\b\d{1,5}[A-Za-z]?\s+(?:[A-Z][a-z]+\s+){1,3}" + _STREET + r"\b\.?"
)
_POSTCODE = re.compile(
    r"\b[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}\b"  # UK
    r"|\b[A-Z]\d[A-Z]\s?\d[A-Z]\d\b"  # Canada
    r"|(?<=\b[A-Z]{2}\s)\d{5}(?:-\d{4})?\b"  # US state code + ZIP
)
_ZIP = re.compile(
    r"(?i:\b(?:zip|post|postal)(?:\s*code)?(?:\s+is|:)?\s+)(\d{5}(?:-\d{4})?)\b"
)  # US ZIP after "zip", "zip code is", "postal code:" (group 1)
# A five-digit number standing alone (not money, not a decimal, not part of a longer number
# or a time) is taken as a US ZIP code even without a cue word: a privacy scrubber errs on
# the side of removing (Presidio's US ZIP recogniser matches the same shape).
_BARE_ZIP = re.compile(r"(?<![\w$£€.,:/#+-])\d{5}(?:-\d{4})?(?![\w%]|[.,:/]\d)")
_PREFIXED_ID = re.compile(r"\b[A-Z]{2,6}[-_#]?\d{5,}\b")
_DIGIT_RUN = re.compile(r"(?<![\w])\+?\(?\d[\d\s().-]{5,}\d(?![\w])")
_CAP = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"
_LOW = r"[a-z]+(?:[-'][a-z]+)?"
_TITLE_ABBREV = r"dr|mr|mrs|ms|mx|prof|rev|fr|capt"
_TITLE = re.compile(
    r"\b(?i:(" + _TITLE_ABBREV + r")|miss|professor|sir|dame|coach|nurse|judge|officer|"
    r"detective)\.?\s+(" + _CAP + r"(?:\s+" + _CAP + r")?|" + _LOW + r")\b"
)
_CONTEXT_PHRASE = (
    r"(?i:\b(?:my name is|i am|i'm|this is|call me|signed,?|regards,?|cheers,?|"
    r"(?:my|our|his|her|their) (?:friend|best friend|coworker|co-worker|colleague|boss|"
    r"manager|sister|brother|partner|wife|husband|girlfriend|boyfriend|mother|father|mom|mum|"
    r"dad|neighbou?r|roommate|flatmate|son|daughter|cousin|aunt|uncle|niece|nephew|ex)))\s+"
)
_CONTEXT_CAP = re.compile(_CONTEXT_PHRASE + r"(" + _CAP + r"(?:\s+" + _CAP + r")?)")
# Lower-case names are taken only after a context phrase or a verb about a person ("told",
# "with", "me and"), or before one ("... said", "... keeps"), and only if the word is a known
# name or not an English word.
_PERSON_VERB = (
    r"(?i:\b(?:told|tell|telling|ask|asked|asking|text|texted|texting|call|called|calling|"
    r"meet|met|with|me and|saw|see|visit|visited|love|loved|miss|missed|thank|thanked|"
    r"invite|invited|trust|trusted|blame|blamed)\s+)"
)
_CONTEXT_LOW = re.compile(
    r"(?:" + _CONTEXT_PHRASE + r"|" + _PERSON_VERB + r")(" + _LOW + r"(?:\s+" + _LOW + r")?)"
)
_BEFORE_VERB = re.compile(
    r"\b(" + _LOW + r"(?:\s+" + _LOW + r")?)\s+(?i:said|says|thinks|thought|told|asked|texted|"
    r"keeps|kept|wants|wanted|agrees|agreed|disagrees|disagreed|noticed|called)\b"
)
_CAP_RUN = re.compile(r"\b(" + _CAP + r")((?:\s+" + _CAP + r")+)\b")
_WORD = re.compile(r"\b" + _CAP + r"\b")
_LOW_WORD = re.compile(r"\b" + _LOW + r"\b")

#: Modern words missing from web2 (1934) that the context rule must not take for names.
_MODERN = frozenset(
    [
        "okay",
        "ok",
        "email",
        "emails",
        "online",
        "offline",
        "app",
        "apps",
        "website",
        "internet",
        "texting",
        "texted",
        "phone",
        "laptop",
        "weekend",
        "weekends",
        "coworker",
        "coworkers",
        "roommate",
        "teammates",
        "gonna",
        "wanna",
        "kinda",
        "yeah",
        "honestly",
        "basically",
        "literally",
        "actually",
        "really",
        "totally",
        "anymore",
        "spreadsheet",
        "spreadsheets",
        "refactor",
        "insta",
        "postcode",
        "coordinating",
    ]
)

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
        "Never",
        "Trust",
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
        "Talking",
        "Ask",
        "Am",
        "User",
        "Assistant",
        "Look",
        "Follow",
        "Here",
        "See",
        "Mail",
        "Send",
        "According",
        "Please",
        "Even",
        "Me",
        "Find",
        "Follow",
        "Ask",
    ]
)


@dataclass(frozen=True)
class Span:
    """One detected PII span of a text.

    Attributes:
        start: first character.
        end: one past the last character.
        placeholder: the typed placeholder that replaces it (one of :data:`PLACEHOLDERS`).
    """

    start: int
    end: int
    placeholder: str


@cache
def _name_list() -> frozenset[str]:
    text = resources.files("icml26.disempowerment.data").joinpath("scrubber_names.txt")
    lines = text.read_text(encoding="utf-8").splitlines()
    return frozenset(ln.strip() for ln in lines if ln.strip() and not ln.startswith("#"))


@cache
def english_words() -> frozenset[str]:
    """Lower-case English words: web2's lower-case entries plus :data:`_MODERN`.

    Returns:
        The word set (about 211,000 words; loaded once, in about half a second).
    """
    from english_words import get_english_words_set

    words = get_english_words_set(["web2"], lower=False, alpha=True)
    return frozenset(w for w in words if w.islower()) | _MODERN


def is_english_word(word: str) -> bool:
    """Whether a token is an English word (lower-case web2 entry, a stop word, a modern word)
    or a simple inflection of one (``-s``, ``-es``, ``-ies``, ``-ed``, ``-ing``, doubled
    consonants, ``'s``)."""
    words = english_words()
    w = word.lower().removesuffix("'s").removesuffix("'")
    if w in words or w in ENGLISH_STOP_WORDS:
        return True
    for suffix in ("ing", "ed", "es", "s", "ies", "er", "est", "ly", "ier", "iest", "ily"):
        if not w.endswith(suffix):
            continue
        stem = w[: -len(suffix)]
        candidates = [stem, stem + "e", stem + "y", stem + "le"]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])
        if any(c in words for c in candidates):
            return True
    return False


_BRITISH = (
    (r"our(s?)$", r"or\1"),
    (r"is(e|es|ed|ing|ation|ations)$", r"iz\1"),
    (r"tre(s?)$", r"ter\1"),
)


def _is_word(word: str) -> bool:
    """:func:`is_english_word`, also true of British spellings (``colour``, ``criticised``)
    and of hyphenated compounds of English words (``check-in``, ``trade-offs``)."""
    if is_english_word(word):
        return True
    if "-" in word:
        return all(_is_word(part) for part in word.split("-") if part)
    for pattern, repl in _BRITISH:
        us = re.sub(pattern, repl, word)
        if us != word and is_english_word(us):
            return True
    return False


@dataclass
class ScrubStats:
    """How many replacements of each kind a scrubber made."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PLACEHOLDERS, 0))

    def add(self, placeholder: str, n: int) -> None:
        self.counts[placeholder] = self.counts.get(placeholder, 0) + n

    def merge(self, other: ScrubStats) -> None:
        for k, v in other.counts.items():
            self.add(k, v)


def _words(m: re.Match[str], group: int) -> list[tuple[int, int, str]]:
    """``(start, end, word)`` of the whitespace-separated words of a match group."""
    base = m.start(group)
    return [
        (base + x.start(), base + x.end(), x.group(0)) for x in re.finditer(r"\S+", m.group(group))
    ]


class _Work:
    """The text being scrubbed, with found spans masked so that later rules skip them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: list[Span] = []

    def take(self, start: int, end: int, placeholder: str) -> None:
        if start >= end or _MASK in self.text[start:end]:
            return
        self.spans.append(Span(start, end, placeholder))
        self.text = self.text[:start] + _MASK * (end - start) + self.text[end:]

    def rule(self, pattern: re.Pattern[str], placeholder: str, group: int = 0) -> None:
        for m in list(pattern.finditer(self.text)):
            start, end = m.span(group)
            if placeholder == "[URL]":  # a sentence's closing punctuation is not the URL's
                while end > start and self.text[end - 1] in ".,;:!?)":
                    end -= 1
            self.take(start, end, placeholder)


class Scrubber:
    """Rule-based PII scrubber (see the module docstring).

    Args:
        extra_names: more names to treat like the shipped list (a user's own roster).

    Attributes:
        stats: replacements made so far, per placeholder.
    """

    def __init__(self, extra_names: Iterable[str] = ()) -> None:
        extra = frozenset(extra_names)
        self.names = _name_list() | extra
        self.all_lower_names = frozenset(n.lower() for n in self.names)
        self.lower_names = frozenset(n for n in self.all_lower_names if not is_english_word(n))
        self.stats = ScrubStats()

    def find(self, text: str) -> list[Span]:
        """The PII spans of ``text`` (sorted, non-overlapping).

        Args:
            text: any text.

        Returns:
            The spans, each with its placeholder.
        """
        w = _Work(text)
        w.rule(_URL, "[URL]")
        w.rule(_EMAIL, "[EMAIL]")
        w.rule(_HANDLE, "[HANDLE]")
        w.rule(_IBAN, "[ID]")
        w.rule(_DATE, "[DATE]")
        w.rule(_ADDRESS, "[ADDRESS]")
        w.rule(_POSTCODE, "[POSTCODE]")
        w.rule(_ZIP, "[POSTCODE]", group=1)
        w.rule(_PREFIXED_ID, "[ID]")
        w.rule(_BARE_ZIP, "[POSTCODE]")
        for m in list(_DIGIT_RUN.finditer(w.text)):
            if sum(ch.isdigit() for ch in m.group(0)) >= 7:
                w.take(*m.span(), "[PHONE]")
        self._names(w)
        return sorted(w.spans, key=lambda s: s.start)

    def _names(self, w: _Work) -> None:
        self._titles(w)
        for m in list(_CONTEXT_CAP.finditer(w.text)):
            words = _words(m, 1)
            while words and words[-1][2] in _NOT_NAMES:
                words.pop()
            if words:
                w.take(words[0][0], words[-1][1], "[NAME]")
        for m in list(_CONTEXT_LOW.finditer(w.text)):
            self._lower_run(w, _words(m, 1))
        for m in list(_BEFORE_VERB.finditer(w.text)):
            words = _words(m, 1)  # the name is the word (or two) right before the verb
            self._lower_run(w, words if self._lower_name(words[-1][2]) else words[-1:])
        for m in list(_CAP_RUN.finditer(w.text)):
            words = _words(m, 0)
            while words and words[0][2] in _NOT_NAMES:
                words.pop(0)
            named = [x for _, _, x in words if x not in _NOT_NAMES]
            if len(named) >= 2 or any(x in self.names for x in named):
                w.take(words[0][0], words[-1][1], "[NAME]")
        for m in list(_WORD.finditer(w.text)):
            if m.group(0) in self.names and m.group(0) not in _NOT_NAMES:
                w.take(*m.span(), "[NAME]")
        self._lower_anywhere(w)

    def _lower_anywhere(self, w: _Work) -> None:
        """Lower-case names without a cue: a word that is a known name but not an English
        word, or that is no English word at all (British spellings and hyphenated compounds
        of English words count as English), with a neighbouring known name (``stacie
        shepherd``); and two known names in a row (``robert moss``)."""
        toks = [(m.start(), m.end(), m.group(0)) for m in _LOW_WORD.finditer(w.text)]

        def adjacent(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
            return w.text[a[1] : b[0]].isspace() and len(w.text[a[1] : b[0]]) <= 2

        def known(t: tuple[int, int, str]) -> bool:
            return t[2] in self.all_lower_names

        for i, tok in enumerate(toks):
            prev = toks[i - 1] if i > 0 and adjacent(toks[i - 1], tok) else None
            nxt = toks[i + 1] if i + 1 < len(toks) and adjacent(tok, toks[i + 1]) else None
            if tok[2] in self.lower_names or (len(tok[2]) >= 3 and not _is_word(tok[2])):
                start = prev[0] if prev is not None and known(prev) else tok[0]
                end = nxt[1] if nxt is not None and known(nxt) else tok[1]
                w.take(start, end, "[NAME]")
            elif nxt is not None and known(tok) and known(nxt):
                w.take(tok[0], nxt[1], "[NAME]")

    def _titles(self, w: _Work) -> None:
        """``Dr. Okafor``, ``Coach Reid``; ``dr diver`` after an abbreviated title."""
        for m in list(_TITLE.finditer(w.text)):
            name = m.group(2)
            abbreviated = m.group(1) is not None and name not in ENGLISH_STOP_WORDS
            if name[0].isupper() or not is_english_word(name) or abbreviated:
                w.take(*m.span(), "[NAME]")

    def _lower_run(self, w: _Work, words: list[tuple[int, int, str]]) -> None:
        """Take the lower-case words of a context slot that may be a name (see the module
        docstring); a first name that is also a word is taken before a surname that is not
        (``rick cisneros``)."""
        first, last = words[0][2], words[-1][2]
        if (
            len(words) == 2
            and first not in ENGLISH_STOP_WORDS
            and self._lower_name(last)
            and not self._lower_name(first)
        ):
            w.take(words[0][0], words[1][1], "[NAME]")
            return
        kept = []
        for word in words:
            if not self._lower_name(word[2]):
                break
            kept.append(word)
        if kept:
            w.take(kept[0][0], kept[-1][1], "[NAME]")

    def _lower_name(self, word: str) -> bool:
        """A lower-case word that may be a name: a known name, or not an English word."""
        if len(word) < 2 or word in ENGLISH_STOP_WORDS:
            return False
        return word in self.all_lower_names or not is_english_word(word)

    def replace(self, text: str, spans: list[Span]) -> str:
        """``text`` with ``spans`` (from :meth:`find`) replaced by their placeholders."""
        out, last = [], 0
        for s in spans:
            out += [text[last : s.start], s.placeholder]
            last = s.end
            self.stats.add(s.placeholder, 1)
        out.append(text[last:])
        return "".join(out)

    def __call__(self, text: str) -> str:
        """``text`` with every detected PII span replaced by its placeholder.

        Args:
            text: any text.

        Returns:
            The scrubbed text.
        """
        return self.replace(text, self.find(text))


def scrub_text(text: str) -> str:
    """Scrub one string with a default :class:`Scrubber`.

    Args:
        text: any text.

    Returns:
        The scrubbed text.
    """
    return Scrubber()(text)
