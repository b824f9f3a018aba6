import sys

from orchlog.cli import main

sys.exit(main())
