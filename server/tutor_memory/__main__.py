import sys

from tutor_memory.cli import main

sys.exit(main())
