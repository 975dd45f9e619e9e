"""The cold path: Python annotations to the type IR, JSON Schemas and typed validators."""
