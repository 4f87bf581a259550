import sys

from bench.locomo.cli import main

raise SystemExit(main(sys.argv[1:]))
