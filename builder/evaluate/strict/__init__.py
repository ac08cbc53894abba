"""``--semantics strict``: only the tests a prediction wrote are scored.

The tolerant unified and function-level appliers (``prediction_patch``, ``fuzzy_diff``,
``function_diff``), repro scripts (``scripts``, ``script_runner``), mutation scores
(``mutation``) and the figures (``metrics``); the runs themselves are the evaluation stage's
(``builder/evaluate/stage.py``).
"""
