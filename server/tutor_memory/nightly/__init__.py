"""The nightly cycle (SPEC R8): consolidation, decay, calibration and citation checks."""
