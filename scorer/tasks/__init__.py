"""Tasks and suites: manifests, loading task modules, linting a suite, a task's rubric."""
