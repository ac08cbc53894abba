"""``--semantics swt-bench``: SWT-Bench's harness as its code runs, applies and grades.

Each repository's command and log parser (``commands``, ``parsers``), SWT-Bench's patch types
(``patch``), the six runs of a prediction (``runs``), its grading (``grading``), its figures
(``metrics``) and its report files (``report``).
"""
