"""Paired differences over seeds for the rule scripts of docs/results:
the mean with its 95 % Student t interval, and its rendering (bold when
the interval excludes 0). Standard library only."""
import math, statistics

# Two-sided 95 % quantiles of Student's t by degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 29: 2.045}


def ci(x):
    """Mean of x and its 95 % t interval (lo, hi)."""
    m = statistics.mean(x)
    h = T975.get(len(x) - 1, 2.0) * statistics.stdev(x) / math.sqrt(len(x))
    return m, m - h, m + h


def fmt(x):
    """'mean [lo, hi]', in bold when the interval excludes 0."""
    m, lo, hi = ci(x)
    s = '%+.2f [%+.2f, %+.2f]' % (m, lo, hi)
    return '**' + s + '**' if lo > 0 or hi < 0 else s
