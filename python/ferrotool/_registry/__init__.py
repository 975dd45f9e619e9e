"""Registration and lookup: the table, the request views over it, and the toolkit."""
