import sys

from tutor_memory.cli.main import main

sys.exit(main())
