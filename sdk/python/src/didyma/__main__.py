"""`python -m didyma`: the same command line as the `didyma` script."""

import sys

from .cli import main

sys.exit(main())
