"""The one rule for seeds: every random operation is repeatable.

An operation that draws random numbers (query or label subsampling, resampling tests and bootstrap
intervals, Monte Carlo draws) takes a seed. When none is given, :func:`resolve_seed` draws one from
the operating system and reports it as a :class:`~prefeval.runtime.notes.Note` ("pass --seed S to
repeat"), on the command line and in the Python API alike. An operation that draws nothing must not
call it, so that it neither draws nor reports a seed.
"""

from __future__ import annotations

import numbers

from prefeval.errors import UsageError, shown
from prefeval.runtime.notes import note

SEED_LIMIT = 2**32
"""Drawn seeds are below this (any non-negative integer may be given)."""


def resolve_seed(seed: int | None) -> int:
    """``seed`` when given (a non-negative integer), else a fresh one, reported as a note."""
    if seed is None:
        import secrets  # only to draw one: with hashlib, it takes longer to import than a small evaluation

        seed = secrets.randbelow(SEED_LIMIT)
        note(f"no --seed given; drew seed {seed} (pass --seed {seed} to repeat)")
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise UsageError(f"seed must be a non-negative integer, not {shown(seed)}")
    return int(seed)
