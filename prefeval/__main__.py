"""``python -m prefeval``: the same as the ``prefeval`` command."""

from prefeval.cli import main

if __name__ == "__main__":
    main()
