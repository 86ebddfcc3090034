"""Entry points of the help desk: settings, services, the command line and the chat UI."""
