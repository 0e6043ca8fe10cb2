"""The table of every example command of the README and docs: page:line, class, the command (see cmd/docexamples)."""

from docexamples.__main__ import main

if __name__ == "__main__":
    main()
