"""The optional C kernels of the keyword leg, the vector leg's top k and score fusion
(``memini_bench/retrieval/_kernels.c``), the JSON element scanner of large data files
(``memini_bench/loaders/_jsonscan.c``) and the hash embedder's word hashing and the dedup keys' hashes
(``memini_bench/text/_words.c``); the rest of the build is in pyproject.toml. ``optional=True``: without a C compiler
the install still succeeds, and keyword.py, vector.py and fusion.py run their numpy and Python paths, which give the
same ids and scores, and loaders/_stream.py parses with json's own scanner."""

from setuptools import Extension, setup

VEC = ["memini_bench/_vec.h"]  # the growable array the three extensions include

setup(ext_modules=[Extension("memini_bench.retrieval._kernels", ["memini_bench/retrieval/_kernels.c"], depends=VEC,
                             extra_compile_args=["-O2", "-ffp-contract=off"], optional=True),
                   Extension("memini_bench.loaders._jsonscan", ["memini_bench/loaders/_jsonscan.c"], depends=VEC,
                             extra_compile_args=["-O2"], optional=True),
                   Extension("memini_bench.text._words", ["memini_bench/text/_words.c"], depends=VEC,
                             extra_compile_args=["-O2"], optional=True)])
