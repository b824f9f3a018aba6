import sys

from orchlog.codegen import main

sys.exit(main())
