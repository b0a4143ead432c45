import sys

from odu.cli import main

sys.exit(main())
