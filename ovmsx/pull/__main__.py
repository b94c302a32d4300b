import sys

from ovmsx.pull.cli import main

sys.exit(main())
