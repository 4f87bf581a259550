"""The phrasing set (hand-labelled messages in seven languages) and the evaluation of the server's
intent detectors on it: `python -m bench.phrasing`. See README.md in this folder."""
