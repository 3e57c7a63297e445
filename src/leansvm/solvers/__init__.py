"""Solvers: each takes arrays and a kernel and returns a fit; none knows about estimators."""
