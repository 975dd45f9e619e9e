"""Per-session tool state and the stores that keep it."""
