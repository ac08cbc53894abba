"""Scoring generated tests on a built dataset: predictions, their patch formats, runs, metrics.

The shared core is this package's modules: the dataset and predictions read (``dataset``,
``predictions``), the records of a task and its result (``records``, ``scores``), the evaluation
stage (``stage``) and the run that drives it and writes the reports (``run``), and the diff
helpers both semantics use (``unified``, ``lines``). Each semantics has its own package:
``swt`` (SWT-Bench's harness, the default) and ``strict`` (only the tests a prediction wrote).
"""
