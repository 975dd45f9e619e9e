"""Built-in tools: the ``reset_tools`` meta tool."""
