"""What reports and the nightly cycle say: the day's digest and report sentences that never
invent."""
