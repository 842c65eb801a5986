"""What every foreign table shares: a name read as a prefeval family and the texts of its parameters
(:class:`Translation`), and the reading of trec_eval's ``name.a=b`` pairs and of ir_measures'
arguments."""

from __future__ import annotations

from typing import NamedTuple

from prefeval.errors import UsageError

CUTOFF = "k"
"""The prefeval parameter that a trec_eval ``.k`` or an ir_measures ``@k`` cut-off sets by default."""


class Translation(NamedTuple):
    """A prefeval family and the texts of the parameters a foreign name sets, by prefeval name.

    ``printed``: what the tool itself prints for the measure when it was named in the tool's own
    syntax (trec_eval echoes the parameters as they were typed: ``set_F.0.5`` is printed ``set_F_0.5``),
    None when the tool's printed name is made from the values. ``listed``: the parameter a number
    after a comma sets in a list of the tool (``P.5,10``: the cut-off); None when such a number
    continues the measure's parameters (``utility.1,-1,0,0``). ``row``: the name of the tool's
    measure it was read as, and ``given`` the texts of the parameters given to it (none: its defaults),
    for the tool's rules on a measure named several times."""

    family: str | None
    values: dict[str, str]
    printed: str | None = None
    listed: str | None = None
    row: str | None = None
    given: tuple[str, ...] = ()

    def spelling(self, family: type, text: str) -> str:
        """prefeval's spelling of the measure: ``family@positional,...,keyword=value``. The
        positional parameters are written up to the last one set (the earlier ones at their
        defaults), then each keyword parameter set. ``family`` is the registered class of
        :attr:`family` (a :class:`~prefeval.measures.base.Measure`), ``text`` the name as written
        (for the error about a parameter the family does not have)."""
        params = family.all_parameters()
        by_name = {param.name: param for param in params}
        for key in self.values:
            if key not in by_name:
                raise UsageError(f"{text}: prefeval's {family.family} has no parameter {key}")
        positional = [param for param in params if not param.keyword]
        last = max((positional.index(by_name[key]) for key in self.values if not by_name[key].keyword), default=-1)
        texts = [self.values.get(param.name, param.written(param.default)) for param in positional[: last + 1]]
        texts += [f"{param.name}={self.values[param.name]}" for param in params
                  if param.keyword and param.name in self.values]
        return family.family + ("@" + ",".join(texts) if texts else "")
