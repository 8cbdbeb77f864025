"""``python -m clawline``: the command line."""

from clawline.cli import main

if __name__ == "__main__":
    main()
