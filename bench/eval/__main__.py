import sys

from bench.eval.cli import main

raise SystemExit(main(sys.argv[1:]))
