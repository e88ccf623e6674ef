"""The benchmarks, one script each (``python bench/latency.py``), and what they share.

Shared, one place each: ``bench.stats`` (percentiles and the summaries the tables print), ``bench.progress`` (the
progress line on stderr), ``bench.speech`` (the bundled Piper voice, where a sound starts) and ``bench.server``
(the in-process server a bench talks to). A script puts the repository root on ``sys.path`` when it is run as a
file, so ``bench.*``, ``agent``, ``clients`` and ``testing`` import the same either way.
"""
