"""`python -m tools.broker`, as documented: the command lives in tools.board.broker."""

import sys

from tools.board.broker import main

if __name__ == "__main__":
    sys.exit(main())
