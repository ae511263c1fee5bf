"""`python -m tools.wiring`, as documented: the command lives in tools.board.wiring."""

import sys

from tools.board.wiring import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
