"""What a tool is: the protocol, the base class, function tools, injection, external tools."""
