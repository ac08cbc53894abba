"""Descriptive statistics for sequences of numbers."""

import math
from collections import Counter


def mean(values):
    """Return the arithmetic mean of *values*."""
    return sum(values) / len(values)


def median(values):
    """Return the middle value of *values* once sorted."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def mode(values):
    """Return the most common value of *values*."""
    counts = Counter(values)
    return counts.most_common(1)[0][0]


def variance(values):
    """Return the population variance of *values*."""
    centre = mean(values)
    return sum((value - centre) ** 2 for value in values) / len(values)


def stdev(values):
    """Return the population standard deviation of *values*."""
    return math.sqrt(variance(values))
