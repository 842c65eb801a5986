"""``python -m prefeval``, and the ``prefeval`` command's entry point: the command line.

Its first line keeps a SIGINT or SIGTERM that arrives while the command line is imported, for the
command to end with quietly once it has started (:func:`prefeval.runtime.signals.keep_early_stops`);
only then is the rest imported. Nothing but the command line imports this module.
"""

from prefeval.runtime.signals import keep_early_stops

keep_early_stops()

from prefeval.cli import main  # noqa: E402  (once stops are kept: importing the command line takes a while)

if __name__ == "__main__":
    main()
