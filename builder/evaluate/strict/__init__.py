"""``--semantics strict``: only the tests a prediction wrote are scored.

Its runs (``runs``: the prediction's test files on R and R∘X, transitions, ΔC's credit, mutants),
the tolerant unified and function-level appliers (``prediction_patch``, ``fuzzy_diff``,
``function_diff``), repro scripts (``scripts``, ``script_runner``), mutation scores
(``mutation``) and the figures (``metrics``).
"""
