"""The number syntax of trec_eval, defined once for every reader of numbers written as text: the
grades and scores of TREC files (:mod:`prefeval.io.trec`) and the parameters of measure names
(:mod:`prefeval.measures.base`). It needs nothing but :mod:`re`, so that naming a measure imports no
numerical library.

trec_eval reads a number with C's ``atof`` (``strtod``): decimal or scientific notation, ``inf``,
``infinity`` or ``nan`` in any case, each with an optional sign. ``atof`` stops at the first byte it
cannot read and returns what it read so far (``1_000`` is 1, Arabic-Indic digits 0); prefeval takes
a field as a number only when all of it is one, and refuses the rest. Python's ``float`` accepts
more than ``strtod`` (underscores, digits of other scripts, surrounding Unicode spaces), so text is
matched against :data:`NUMBER` before ``float`` reads it. C's hexadecimal numbers (``0x1p3``),
which no run file uses, are not numbers here.
"""

from __future__ import annotations

import re
from itertools import product

NUMBER = re.compile(rb"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf(?:inity)?|nan))")
"""A number as C's ``strtod`` reads one whole, in ASCII bytes."""
NUMBER_WITH_COMMA = re.compile(NUMBER.pattern.replace(rb"\.", rb"[.,]"))
"""The same, the decimal point written as a point or a comma."""
INTEGER = re.compile(rb"[+-]?[0-9]+")
"""An integer in ASCII digits."""
NAN_SPELLINGS = tuple(sign + "".join(letters) for sign in ("", "+", "-") for letters in product("nN", "aA", "nN"))
"""Every way :data:`NUMBER` writes a NaN."""


def is_number(text: str | bytes, syntax: re.Pattern = NUMBER) -> bool:
    """Whether all of ``text`` is a number in ``syntax``."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogateescape")
    return syntax.fullmatch(text) is not None


_HEXADECIMAL = re.compile(rb"\s*[+-]?0[xX]")
_LEADING_SPACE = re.compile(rb"\s*")


def leading_number(text: str | bytes) -> float | None:
    """The number C's ``sscanf("%lf")`` reads at the start of ``text`` (after any whitespace, up to
    the first byte that does not continue it: ``0.7x`` is 0.7), or None when none starts it, or when
    it is hexadecimal (``0x1p3``: not a number here, module docstring)."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogateescape")
    if _HEXADECIMAL.match(text):
        return None
    found = NUMBER.match(text, _LEADING_SPACE.match(text).end())
    return float(found.group(0)) if found is not None else None
