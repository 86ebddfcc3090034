"""The benchmark: the optimized graph against the plain agent and `create_agent`, side by side."""
