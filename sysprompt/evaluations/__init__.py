"""Evaluations: suites of cases replayed through a model, a candidate compared with a baseline."""
