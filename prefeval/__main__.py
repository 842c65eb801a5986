"""``python -m prefeval``, and the entry points of the ``prefeval`` and ``prefeval-trec_eval`` commands.

Its first line keeps a SIGINT or SIGTERM that arrives while the command line is imported, for the
command to end with quietly once it has started (:func:`prefeval.runtime.signals.keep_early_stops`);
only then is the rest imported. Nothing but the command line imports this module.
"""

from prefeval.runtime.signals import keep_early_stops

keep_early_stops()

import sys  # noqa: E402

from prefeval.cli import main  # noqa: E402  (once stops are kept: importing the command line takes a while)


def trec_eval() -> None:
    """The console script ``prefeval-trec_eval``: ``prefeval trec_eval`` with the process's arguments."""
    sys.argv.insert(1, "trec_eval")
    main()


if __name__ == "__main__":
    main()
