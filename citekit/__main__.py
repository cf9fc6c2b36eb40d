"""``python -m citekit``: the same command line as the ``citekit`` script."""

from citekit.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
