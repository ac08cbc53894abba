"""Basic arithmetic helpers."""

import math


def add(a, b):
    """Return the sum of *a* and *b*."""
    return a + b


def subtract(a, b):
    """Return *a* minus *b*."""
    return a - b


def multiply(a, b):
    """Return the product of *a* and *b*."""
    return a * b


def divide(a, b):
    """Return *a* divided by *b*; raise ZeroDivisionError when *b* is zero."""
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return a / b


def power(base, exponent):
    """Return *base* raised to *exponent*."""
    return math.pow(base, exponent)


def clamp(value, low, high):
    """Limit *value* to the closed interval [low, high]."""
    if low > high:
        raise ValueError("low must not exceed high")
    return max(low, min(value, high))
