"""The progress line: drawn on a terminal only, never on stdout, cleared when done."""

from __future__ import annotations

import io

from prefeval.runtime.progress import Progress, clear_progress_line


def test_progress_is_drawn_in_place_and_cleared():
    stream = io.StringIO()
    progress = Progress(enabled=True, stream=stream)
    progress.start("parsing runs", 3)
    for _ in range(3):
        progress.advance()
    progress.finish()
    text = stream.getvalue()
    assert text.startswith("\r\033[Kprefeval: parsing runs 0/3")
    assert "prefeval: parsing runs 3/3" in text  # the last step is always drawn
    assert text.endswith("\r\033[K")


def test_progress_is_silent_when_disabled_or_not_on_a_terminal(capsys):
    stream = io.StringIO()
    progress = Progress(enabled=False, stream=stream)
    progress.start("x", 2)
    progress.advance(2)
    progress.finish()
    assert stream.getvalue() == ""
    assert not Progress.for_terminal().enabled  # pytest's stderr is not a terminal
    assert not Progress.for_terminal(quiet=True).enabled
    assert capsys.readouterr() == ("", "")


def test_clearing_for_other_output_erases_the_line_only_when_it_is_shown():
    stream = io.StringIO()
    progress = Progress(enabled=True, stream=stream)
    clear_progress_line()  # nothing shown: nothing written
    assert stream.getvalue() == ""
    progress.start("queries", 2)
    clear_progress_line()
    assert stream.getvalue() == "\r\033[Kprefeval: queries 0/2\r\033[K"
    clear_progress_line()  # already cleared
    progress.advance(2)  # drawn again at its next update
    assert stream.getvalue().endswith("\r\033[Kprefeval: queries 2/2")
    progress.finish()
    clear_progress_line()
    assert stream.getvalue().endswith("2/2\r\033[K")
