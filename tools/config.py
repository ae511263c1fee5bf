"""`python -m tools.config`, as documented: the command lives in tools.board.config."""

import sys

from tools.board.config import main

if __name__ == "__main__":
    sys.exit(main())
