import sys

from ovmsx.cli import main

sys.exit(main())
