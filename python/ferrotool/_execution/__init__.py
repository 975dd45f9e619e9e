"""The execution of calls: compiled tools, the one call pipeline, its outcomes, the runner."""
