"""`python -m tools.deploy`, as documented: the command lives in tools.board.deploy."""

import sys

from tools.board.deploy import main

if __name__ == "__main__":
    sys.exit(main())
