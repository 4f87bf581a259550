"""Calibration: the honesty check on the tutor's confidence (SPEC R8.3).

Before each check the tutor may predict the student's mastery (0..1); afterwards the outcome is
known. Binned, the pairs give a reliability curve and an expected calibration error (ECE):

    ECE = sum over non-empty bins b of (count_b / n) * |mean_predicted_b - observed_right_b|

where n is the number of checks with a prediction. The tutor's confidence may be read as a
probability ("calibrated") only from MIN_CHECKS_FOR_CALIBRATION checks with a prediction and when
the ECE is at most MAX_CALIBRATED_ECE; otherwise the statement says to treat confidence as a
ranking, not a probability.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

# Ten equal-width bins over [0, 1], the usual reliability-diagram resolution; a prediction of
# exactly 1.0 goes into the last bin.
BIN_COUNT = 10

# R8.3: fewer checks with a prediction than this say nothing about calibration.
MIN_CHECKS_FOR_CALIBRATION = 5

# Above this expected calibration error, predictions are off by more than one bin's width on
# average: the confidence orders students and concepts but is not a probability.
MAX_CALIBRATED_ECE = 0.10

# An overall gap between mean prediction and observed rate smaller than this is reported as
# neither over- nor under-confident: it is less than the rounding the statement prints.
BIAS_TOLERANCE = 0.005


@dataclass(frozen=True, slots=True)
class CalibrationBin:
    """One bin of the reliability curve: predictions in [lower, upper) (the last bin includes 1)."""

    lower: float
    upper: float
    count: int
    mean_predicted: float
    observed_right: float


@dataclass(frozen=True, slots=True)
class Calibration:
    checks_with_prediction: int
    # Non-empty bins only, lowest first: an empty bin has no mean to report.
    bins: tuple[CalibrationBin, ...]
    expected_calibration_error: float
    calibrated: bool
    statement: str


def _bin_index(predicted: float) -> int:
    return min(int(predicted * BIN_COUNT), BIN_COUNT - 1)


def _checks(n: int) -> str:
    return f"{n} check carries" if n == 1 else f"{n} checks carry"


def calibrate(pairs: Sequence[tuple[float, bool]]) -> Calibration:
    """The reliability curve and ECE of (predicted mastery, check was right) pairs.

    Raises ValueError for a prediction outside [0, 1] (or not a number): the caller validated
    predictions when the checks were recorded, so one here is a bug, not data.
    """
    for predicted, _ in pairs:
        if not (math.isfinite(predicted) and 0.0 <= predicted <= 1.0):
            raise ValueError(f"predicted mastery {predicted!r} is not a number from 0 to 1")
    n = len(pairs)
    groups: list[list[tuple[float, bool]]] = [[] for _ in range(BIN_COUNT)]
    for pair in pairs:
        groups[_bin_index(pair[0])].append(pair)
    bins = tuple(
        CalibrationBin(
            lower=i / BIN_COUNT,
            upper=(i + 1) / BIN_COUNT,
            count=len(group),
            mean_predicted=math.fsum(p for p, _ in group) / len(group),
            observed_right=sum(1 for _, right in group if right) / len(group),
        )
        for i, group in enumerate(groups)
        if group
    )
    ece = math.fsum(b.count / n * abs(b.mean_predicted - b.observed_right) for b in bins)

    if n < MIN_CHECKS_FOR_CALIBRATION:
        lead = "No check carries a prediction yet" if n == 0 else _checks(n) + " a prediction"
        statement = (
            f"{lead}; at least {MIN_CHECKS_FOR_CALIBRATION} are needed before calibration means "
            "anything: treat confidence as a ranking, not a probability"
        )
        return Calibration(n, bins, ece, False, statement)

    mean_predicted = math.fsum(p for p, _ in pairs) / n
    observed = sum(1 for _, right in pairs if right) / n
    gap = mean_predicted - observed
    if gap > BIAS_TOLERANCE:
        bias = "predictions ran over-confident"
    elif gap < -BIAS_TOLERANCE:
        bias = "predictions ran under-confident"
    else:
        bias = "predictions ran neither over- nor under-confident on average"
    calibrated = ece <= MAX_CALIBRATED_ECE
    verdict = (
        "calibrated"
        if calibrated
        else "not calibrated: treat confidence as a ranking, not a probability"
    )
    statement = (
        f"{_checks(n)} a prediction; expected calibration error {ece:.2f}: {verdict}; {bias} "
        f"(mean prediction {mean_predicted:.2f}; {observed:.2f} of the checks were right)"
    )
    return Calibration(n, bins, ece, calibrated, statement)


def calibration_json(result: Calibration) -> str:
    return json.dumps(asdict(result), ensure_ascii=False, sort_keys=True)
