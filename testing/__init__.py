"""What the tests and the benchmarks share: emulators of the remote services, known speech, echo scenes,
reference-audio files and socket helpers.

Importable from ``tests/`` (pytest puts the repository root on ``sys.path``) and from ``bench/`` scripts (which
put it there themselves). Nothing here is collected as a test; it changes when what tests and benchmarks need
to drive the server changes.
"""
