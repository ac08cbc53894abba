"""Compare a built release with a published SWE-bench-format benchmark (`swt-builder compare`)."""
