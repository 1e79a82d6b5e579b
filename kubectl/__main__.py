"""`python -m kubectl ...` is `pkctl ...`."""

import sys

from kubectl.main import main

if __name__ == "__main__":
    sys.exit(main())
