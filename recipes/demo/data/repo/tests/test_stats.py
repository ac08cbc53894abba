from calc.stats import mean, median, mode, stdev, variance


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_median_odd_length():
    assert median([3, 1, 2]) == 2


def test_mode():
    assert mode([1, 2, 2, 3]) == 2


def test_variance():
    assert variance([2, 4, 4, 4, 5, 5, 7, 9]) == 4


def test_stdev():
    assert stdev([2, 4, 4, 4, 5, 5, 7, 9]) == 2
