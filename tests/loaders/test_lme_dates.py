"""LongMemEval's dates: the direct read of the canonical spelling gives exactly what ``strptime`` gives."""

from __future__ import annotations

import random

from memini_bench.loaders.dates import parse_layout
from memini_bench.loaders.longmemeval import DATE_LAYOUT, parse_lme_date

EDGES = ["2023/05/30 (Tue) 23:40", "2023/05/30 (Mon) 23:40", "2023/02/30 (Tue) 23:40", "2023/05/30 (Tue) 24:00",
         "2023/05/30 (Tue) 23:60", "0000/05/30 (Tue) 23:40", "2023/00/10 (Tue) 10:00", " 2023/05/30 (Tue) 23:40 ",
         "2023/5/30 (Tue) 23:40", "2023/05/30 (tue) 23:40", "2023/05/30  (Tue) 23:40", "", "x",
         "2023/05/30 (Tue) 9:40", "2024/02/29 (Thu) 00:00", "2023/02/29 (Wed) 00:00",
         "\u0662\u0660\u0662\u0663/05/30 (Tue) 23:40", "2023/05/30 (Tue) 23:40\n", "2023/05/30 (Tuesday) 23:40"]


def test_direct_read_equals_strptime():
    rng = random.Random(7)
    digits = "0123456789"
    made = [f"{''.join(rng.choices(digits, k=4))}/{rng.randint(0, 13):02d}/{rng.randint(0, 32):02d} "
            f"({rng.choice(['Mon', 'Sun', 'Xyz'])}) {rng.randint(0, 25):02d}:{rng.randint(0, 61):02d}"
            for _ in range(3000)]
    for text in EDGES + made:
        assert parse_lme_date(text) == parse_layout(text, DATE_LAYOUT), text
    assert sum(parse_lme_date(t) is not None for t in made) > 100  # the direct read is exercised
