import sys

from bench.phrasing.evaluate import main

raise SystemExit(main(sys.argv[1:]))
