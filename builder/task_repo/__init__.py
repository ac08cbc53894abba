"""SWE-bench task repos: the format (``format``), a release as tasks (``release``), the export
with each task's image (``export``) and a task repo as a build's source (``source``)."""
