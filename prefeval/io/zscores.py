"""trec_eval's z-score files (``trec_eval -Z FILE``, ``prefeval eval -Z FILE``): for each query and
measure, the mean and standard deviation of the measure's values over a reference set of runs, against
which trec_eval prints z-scores in place of the values (:mod:`prefeval.analyses.zscores`).

The format is trec_eval 10.0's (``get_zscores.c``, which its ``test/zscores_file`` follows): one line
per query and measure, four fields separated by whitespace (spaces, tabs, and a carriage return before
the line end),

    qid  measure  mean  stddev

the measure named as trec_eval prints it (``map``, ``P_10``, ``iprec_at_recall_0.50``, ``set_F_0.5``).
As trec_eval reads it:

* a line with fewer or more than four fields is malformed, an empty line too (trec_eval: "Malformed
  line N"; the last line may lack its line end); there are no comments (``# a b c`` is the query
  ``#`` and the measure ``a``);
* an empty file cannot be read (trec_eval: "Cannot read zscores file").

prefeval reads the two numbers as C's ``strtod`` reads a whole field (:mod:`prefeval.io.numbers`) and
refuses a field that is not one, and NaN and infinities, where trec_eval's ``atof`` reads ``abc`` as 0
and ``1.5x`` as 1.5. A query and measure listed twice is refused too: trec_eval keeps both lines and its binary
search finds one or the other, depending on how its sort placed them. Every error is one
:class:`ZScoreFileError` naming the file and the line.

The file may be gzip (read by its magic bytes) or, for ``prefeval eval``, ``-`` for stdin.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from prefeval.errors import InputError
from prefeval.io.numbers import NUMBER, is_number
from prefeval.io.source import display_name, read_bytes

FIELDS = ("qid", "measure", "mean", "stddev")
"""The fields of a line, in order."""


class ZScoreFileError(InputError):
    """What is wrong with a z-score file (trec_eval ends with exit code 255 on such a file, where it
    ends with 2 on bad qrels or runs: ``prefeval trec_eval`` keeps that difference)."""


class Reference(NamedTuple):
    """The mean and standard deviation of one measure on one query."""

    mean: float
    stddev: float


class ZScores(NamedTuple):
    """A z-score file as read: ``references[qid][measure]``, by trec_eval's printed measure name;
    ``source``, the file as named."""

    source: str
    references: dict[str, dict[str, Reference]]

    def reference(self, qid: str, measure: str) -> Reference | None:
        """The mean and standard deviation of ``measure`` on ``qid``, None when the file has none.

        trec_eval looks both up by binary search (``convert_zscores.c``'s ``find_qid`` and
        ``find_meas``), whose upper end starts one past the last element, so that a query or measure
        that sorts after the last one of the file reads beyond the array (trec_eval 10.0 then crashes,
        or compares with whatever memory holds). This is the lookup those searches intend: an exact
        match, or none."""
        found = self.references.get(qid)
        return None if found is None else found.get(measure)


def read_zscores(path: str) -> ZScores:
    """Read the z-score file ``path`` (module docstring); a :class:`ZScoreFileError` for what is wrong
    with it."""
    name = display_name(path)
    try:
        data = read_bytes(path)
    except InputError as error:
        raise ZScoreFileError(error.source, error.message, error.line) from None
    if not data:
        raise ZScoreFileError(name, "an empty z-score file: expected lines of qid, measure, mean and standard "
                                    "deviation")
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    references: dict[str, dict[str, Reference]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if len(fields) != len(FIELDS):
            raise ZScoreFileError(name, f"expected {len(FIELDS)} fields ({' '.join(FIELDS)}), found {len(fields)}",
                                  number)
        qid, measure = (field.decode("utf-8", "surrogateescape") for field in fields[:2])
        numbers = []
        for label, field in zip(FIELDS[2:], fields[2:]):
            if not is_number(field, NUMBER) or not math.isfinite(float(field)):
                shown = field.decode("utf-8", "backslashreplace")
                raise ZScoreFileError(name, f"the {label} is not a finite number: {shown!r}", number)
            numbers.append(float(field))
        earlier = first_line.setdefault((qid, measure), number)
        if earlier != number:
            raise ZScoreFileError(name, f"query {qid} and measure {measure} again (first on line {earlier}): "
                                        "give one mean and standard deviation for each", number)
        references.setdefault(qid, {})[measure] = Reference(*numbers)
    return ZScores(name, references)
