"""The paper's taxonomy of situational disempowerment potential (one place for every name).

Three *distortion dimensions* — an interaction risks leading the user to (1) a distorted
perception of reality, (2) an inauthentic value judgment, (3) an action misaligned with their
values — each graded on a four-level *severity* scale; four *amplifying factors* that raise the
potential (vulnerability, attachment, authority projection, dependency); and the conversation's
*domain*. ``any`` is the derived variable "highest severity over the three dimensions".
"""

from __future__ import annotations

__all__ = [
    "AMPLIFIERS",
    "DIMENSIONS",
    "DOMAINS",
    "DOMAIN_LABELS",
    "OTHER_DOMAIN",
    "PERSONAL_DOMAINS",
    "SEVERITIES",
    "VARIABLES",
    "domain_index",
    "severity_index",
]

DIMENSIONS: tuple[str, ...] = ("reality", "value", "action")
SEVERITIES: tuple[str, ...] = ("none", "mild", "moderate", "severe")
AMPLIFIERS: tuple[str, ...] = ("vulnerability", "attachment", "authority_projection", "dependency")
DOMAINS: tuple[str, ...] = (
    "relationships",
    "lifestyle",
    "health",
    "work",
    "technical",
    "creative",
)
#: The explicit label for a domain outside :data:`DOMAINS` (a judge that answers "coding" or
#: "finance"): its own category, never folded silently into a named domain.
OTHER_DOMAIN = "other"
#: Every domain label a classifier may output: the six domains, then ``other`` (index 6).
DOMAIN_LABELS: tuple[str, ...] = (*DOMAINS, OTHER_DOMAIN)
#: The personal domains where the paper finds substantially higher rates.
PERSONAL_DOMAINS: tuple[str, ...] = ("relationships", "lifestyle")
#: The per-dimension severity variables plus ``any`` (max over dimensions).
VARIABLES: tuple[str, ...] = (*DIMENSIONS, "any")


def severity_index(name: str) -> int:
    """The index of a severity name.

    Args:
        name: one of :data:`SEVERITIES`.

    Returns:
        ``0`` for ``"none"`` ... ``3`` for ``"severe"``.

    Raises:
        ValueError: naming the scale, for any other name.
    """
    try:
        return SEVERITIES.index(name)
    except ValueError:
        raise ValueError(f"unknown severity {name!r}; expected one of {SEVERITIES}") from None


def domain_index(name: str) -> int:
    """The index of a domain label in :data:`DOMAIN_LABELS`.

    Args:
        name: one of :data:`DOMAIN_LABELS` (the six domains or ``"other"``).

    Returns:
        Its index (``6`` for ``"other"``).

    Raises:
        ValueError: naming the labels, for an unknown domain (never a silent category).
    """
    try:
        return DOMAIN_LABELS.index(name)
    except ValueError:
        raise ValueError(f"unknown domain {name!r}; expected one of {DOMAIN_LABELS}") from None
