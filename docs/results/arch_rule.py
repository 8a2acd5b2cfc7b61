#!/usr/bin/env python3
"""Apply docs/results/arch-root-rule.md: pair candidate runs
(classifier.arch = "root") with baseline runs of the same seeds (the
paper's f), both `fasd eval --json` output.

    python3 docs/results/arch_rule.py [-v] BASE CAND [BASE CAND ...]

Standard library only.
"""
import sys

from arch_auto_rule import main

if __name__ == '__main__':
    main(sys.argv[1:], 'arch_rule.py', 'root − gcn', relative=False)
