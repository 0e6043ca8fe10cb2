"""The optional C kernels of the keyword leg, the vector leg's top k and score fusion
(``memini_bench/retrieval/_kernels.c``); the rest of the build is in pyproject.toml. ``optional=True``: without a
C compiler the install still succeeds, and keyword.py, vector.py and fusion.py run their numpy and Python paths,
which give the same ids and scores."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("memini_bench.retrieval._kernels", ["memini_bench/retrieval/_kernels.c"],
                             extra_compile_args=["-O2", "-ffp-contract=off"], optional=True)])
