"""R8.3: predicted mastery against outcomes, binned into a reliability curve and an ECE."""

from __future__ import annotations

import pytest

from tutor_memory.domain.beliefs.calibration import (
    BIN_COUNT,
    MIN_CHECKS_FOR_CALIBRATION,
    CalibrationBin,
    calibrate,
)


def test_ece_matches_a_hand_computed_set() -> None:
    pairs = [(0.15, True), (0.15, False), (0.85, True), (0.8, False), (0.95, True)]
    result = calibrate(pairs)
    # Bin [0.1, 0.2): mean 0.15, half right, gap 0.35 over 2 checks.
    # Bin [0.8, 0.9): mean 0.825, half right, gap 0.325 over 2 checks.
    # Bin [0.9, 1.0]: mean 0.95, all right, gap 0.05 over 1 check.
    # ECE = 2/5 * 0.35 + 2/5 * 0.325 + 1/5 * 0.05 = 0.14 + 0.13 + 0.01 = 0.28.
    assert result.expected_calibration_error == pytest.approx(0.28)
    rounded = tuple(
        CalibrationBin(b.lower, b.upper, b.count, round(b.mean_predicted, 9), b.observed_right)
        for b in result.bins
    )
    assert rounded == (
        CalibrationBin(0.1, 0.2, 2, 0.15, 0.5),
        CalibrationBin(0.8, 0.9, 2, 0.825, 0.5),
        CalibrationBin(0.9, 1.0, 1, 0.95, 1.0),
    )
    assert result.checks_with_prediction == 5


def test_a_certain_prediction_goes_into_the_last_bin_and_zero_into_the_first() -> None:
    result = calibrate([(1.0, True), (0.0, False)])
    assert [(b.lower, b.upper, b.count) for b in result.bins] == [(0.0, 0.1, 1), (0.9, 1.0, 1)]
    assert len(result.bins) <= BIN_COUNT


def test_below_five_checks_the_statement_says_to_treat_confidence_as_a_ranking() -> None:
    result = calibrate([(0.9, True), (0.7, True), (0.4, False)])
    assert not result.calibrated
    assert result.statement == (
        "3 checks carry a prediction; at least 5 are needed before calibration means anything: "
        "treat confidence as a ranking, not a probability"
    )


def test_four_perfect_predictions_are_still_not_calibrated_five_are() -> None:
    perfect = [(1.0, True)] * MIN_CHECKS_FOR_CALIBRATION
    assert not calibrate(perfect[:-1]).calibrated
    result = calibrate(perfect)
    assert result.calibrated
    assert result.expected_calibration_error == 0.0
    assert result.statement.startswith(
        "5 checks carry a prediction; expected calibration error 0.00: calibrated"
    )


def test_no_prediction_at_all_is_said_plainly() -> None:
    result = calibrate([])
    assert result.bins == ()
    assert result.expected_calibration_error == 0.0
    assert not result.calibrated
    assert result.statement.startswith("No check carries a prediction yet; at least 5 are needed")


def test_over_confident_predictions_are_named_and_not_called_calibrated() -> None:
    result = calibrate([(0.9, False)] * 4 + [(0.9, True)] * 2)
    assert not result.calibrated
    assert "predictions ran over-confident" in result.statement
    assert "treat confidence as a ranking, not a probability" in result.statement


def test_under_confident_predictions_are_named() -> None:
    result = calibrate([(0.2, True)] * 6)
    assert "predictions ran under-confident" in result.statement
    assert result.expected_calibration_error == pytest.approx(0.8)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_a_prediction_outside_zero_to_one_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="predicted mastery"):
        calibrate([(bad, True)])
