"""Errors users can act on. The CLI prints them as one line, never a traceback."""


class OrchlogError(Exception):
    """A problem with the user's input or environment, stated so they can fix it."""
