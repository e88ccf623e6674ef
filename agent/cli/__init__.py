"""The operator's commands of ``python -m agent`` besides ``serve``: ``tokens``, ``voices`` (and ``voices check``),
``endpoint``. Each module adds its subcommands to the parser ``agent.__main__`` builds and runs them with the
settings read there."""
