"""Benchmarks for ``make bench``: each prints a figure and its ratio to a target, measured in one run."""
