"""The help-desk graph: state, nodes, routing and the compiled LangGraph."""
