"""`python -m tools.check`, as documented: the command lives in tools.board.check."""

import sys

from tools.board.check import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
