"""Sources that turn GitHub PRs or SWE-bench-format datasets into Candidate records."""
