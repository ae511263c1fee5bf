"""python -m tools.replay"""

import sys

from tools.replay.front import main

sys.exit(main())
