"""Per-request tool surfaces: the request config, its merge modes, and the resolution rule."""
