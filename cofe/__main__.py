import sys

from cofe.cli import main

sys.exit(main())
