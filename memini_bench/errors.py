"""The one exception a user can cause: the CLI prints it as a single line and exits with code 2."""


class BenchError(Exception):
    """Bad input (file, flag, schema, server, cache): the message names the input and the fix."""
