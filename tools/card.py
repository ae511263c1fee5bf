"""`python -m tools.card`, as documented: the command lives in tools.board.card."""

import sys

from tools.board.card import main

if __name__ == "__main__":
    sys.exit(main())
