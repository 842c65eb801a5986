"""How an id is spelled where it must be written as UTF-8 text: in JSON lines.

Query ids, document ids and run ids (a run file's name, a run's tag) are kept as the bytes they were
read from, decoded with ``surrogateescape`` (:mod:`prefeval.io.trec`): a byte that is not part of
valid UTF-8 is held as the lone surrogate U+DC80 + its value. JSON text is UTF-8, so such a byte
cannot be written as it is. :func:`id_text` spells an id:

* a backslash ``\\`` is written ``\\\\`` (two backslashes);
* each byte that is not part of valid UTF-8 is written ``\\xNN``, NN its value in two lowercase
  hexadecimal digits;
* every other character stands for itself (a lone surrogate outside U+DC80..U+DCFF, which only a
  Python string can hold, is written ``\\uNNNN``).

Every backslash of the spelling starts one of these escapes, so the spelling is **injective**: two
different ids are two different texts, and an id is read back from its spelling by replacing ``\\\\``
with a backslash and ``\\xNN`` with the byte NN, from left to right. The id of the byte ``q`` then the
byte 0xFF is spelled ``q\\xff``; the id of the four characters ``q\\xff`` is spelled ``q\\\\xff``
(as a JSON string, ``"q\\\\xff"`` and ``"q\\\\\\\\xff"``). An id that is valid UTF-8 and holds no
backslash, as nearly every id does, is spelled as itself.

The spelling is for JSON, the one output that must be UTF-8. The text layouts (``tsv``, trec_eval's
and ir_measures', the tables) write an id's own bytes, as trec_eval prints them (a tsv field then
escapes a backslash, a tab and a line end as linear TSV does: :func:`~prefeval.report.formats.tsv_text`),
and the Python API hands ids over as Python strings, surrogate escapes included. What reads JSON
lines back (``aggregate``, ``significance``, ``plot``) takes each id as the text it is, and writes it
as it read it.
"""

from __future__ import annotations

from collections.abc import Sequence

_SPELLING = {ord("\\"): "\\\\"}
_SPELLING.update({code: f"\\u{code:04x}" for code in range(0xD800, 0xE000)})
_SPELLING.update({0xDC00 + byte: f"\\x{byte:02x}" for byte in range(0x80, 0x100)})
"""The characters :func:`id_text` replaces: the backslash, and every lone surrogate (those that
stand for a byte as ``\\xNN``)."""


def id_text(text: str) -> str:
    """``text``, an id, in the injective spelling of the module docstring."""
    if "\\" not in text and text.isascii():
        return text
    return text.translate(_SPELLING)


def id_texts(texts: Sequence[str]) -> list[str]:
    """:func:`id_text` of each id; the list itself when no id needs a change (ASCII, no backslash),
    which one pass over the joined ids tells."""
    texts = list(texts)
    joined = "".join(texts)
    if "\\" not in joined and joined.isascii():
        return texts
    return [text.translate(_SPELLING) for text in texts]
