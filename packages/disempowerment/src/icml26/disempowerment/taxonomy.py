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
    "PERSONAL_DOMAINS",
    "SEVERITIES",
    "VARIABLES",
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
#: The personal domains where the paper finds substantially higher rates.
PERSONAL_DOMAINS: tuple[str, ...] = ("relationships", "lifestyle")
#: The per-dimension severity variables plus ``any`` (max over dimensions).
VARIABLES: tuple[str, ...] = (*DIMENSIONS, "any")


def severity_index(name: str) -> int:
    """``"none" -> 0 ... "severe" -> 3``; raises ``ValueError`` naming the scale otherwise."""
    try:
        return SEVERITIES.index(name)
    except ValueError:
        raise ValueError(f"unknown severity {name!r}; expected one of {SEVERITIES}") from None
