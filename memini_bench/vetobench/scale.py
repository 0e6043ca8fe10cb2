"""The scale curve (beyond the original): veto recall@5 per system as the decision log grows.

The original's own caveat: 24 decisions fit in any context window, so retrieval only matters at hundreds. Here
the suite's decisions are padded with generated distractors - realistic engineering decisions from our own
templates over ~30 concerns (logging, jobs, caching, auth, styling, ...), 15 code areas and their files, with
rejected alternatives, dates over the 18 months before ``as_of``, review marks and relevance - to N decisions
for each N in ``sizes``. Generation is deterministic for a seed and nested (the corpus at N is a prefix of the one
at N' > N). No distractor chooses or rejects a scenario's rejected option (``judge.names_match`` either way), so
each scenario's veto decision stays its only right answer; distractors do compete on topic, wording and files
(many touch the same ``packages/api/src/server.ts`` a scenario has in scope), as a real log's decisions would.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from memini_bench.core.dataset import Dataset
from memini_bench.core.table import Cell, Column, Table, fmt_num
from memini_bench.core.table import render as render_table
from memini_bench.errors import BenchError
from memini_bench.evaluation.hits import RunGuardOptions
from memini_bench.loaders.vetobench import Decision, Rejection, VetoSuite, suite_dataset
from memini_bench.results.write import atomic_write
from memini_bench.systems.memini import System
from memini_bench.vetobench.defaults import DEFAULT_SEED, DEFAULT_SIZES
from memini_bench.vetobench.evaluate import VetoScore, evaluate
from memini_bench.vetobench.judge import names_match

PLOT_NEEDS = "-plot needs the plot extra (matplotlib is not installed): pip install 'memini-bench[plot]'"


@dataclass(frozen=True)
class Concern:
    """One engineering concern: its candidate choices, the details decisions about it talk about, and the files
    such decisions touch (paths under the decision's area; ``~/...`` paths are at the repository root)."""

    topic: str
    choices: tuple[str, ...]
    details: tuple[str, ...]
    files: tuple[str, ...]


CONCERNS = (
    Concern("structured logging", ("pino", "winston", "bunyan", "JSON lines on stdout"),
            ("one JSON line per request", "request ids carried through every log line", "log levels per module"),
            ("src/logger.ts",)),
    Concern("background jobs", ("BullMQ", "pg-boss", "SQS consumers", "Temporal", "Graphile Worker"),
            ("retries with backoff for failed jobs", "scheduled jobs that survive deploys", "exactly-once webhooks"),
            ("src/jobs.ts", "src/worker.ts")),
    Concern("feature flags", ("Unleash", "GrowthBook", "environment variables", "a flags table in Postgres"),
            ("gradual rollouts per tenant", "kill switches for risky code paths"), ("src/flags.ts",)),
    Concern("input validation", ("Zod", "Valibot", "TypeBox", "Yup"),
            ("typed request bodies at the boundary", "one schema shared by client and server"),
            ("src/schemas.ts", "src/server.ts")),
    Concern("styling", ("Tailwind CSS", "CSS Modules", "vanilla-extract", "Panda CSS"),
            ("a consistent design system", "theming and dark mode", "no runtime style cost in the browser"),
            ("tailwind.config.ts", "src/styles.css")),
    Concern("client state", ("Zustand", "Jotai", "React context", "XState"),
            ("global state for session, filters and toasts", "state that survives navigation"), ("src/store.ts",)),
    Concern("data fetching", ("TanStack Query", "SWR", "plain fetch hooks", "server components"),
            ("cache invalidation after mutations", "loading and error states on every screen"),
            ("src/api-client.ts", "src/queries.ts")),
    Concern("testing", ("Vitest", "node:test", "Playwright", "Testing Library", "Cypress"),
            ("fast unit tests for request handlers", "end-to-end tests of the checkout flow", "watch mode in dev"),
            ("package.json", "vitest.config.ts")),
    Concern("the HTTP framework", ("Hono", "Fastify", "Koa", "tRPC"),
            ("middleware for auth, logging and rate limiting", "routing that runs on Node and edge runtimes"),
            ("src/server.ts", "src/middleware.ts", "src/routes.ts")),
    Concern("database access", ("postgres.js", "Kysely", "Drizzle ORM", "node-postgres"),
            ("type-safe queries against Postgres", "visible query plans", "connection pooling on serverless"),
            ("src/db.ts", "src/queries.ts")),
    Concern("schema migrations", ("dbmate", "numbered SQL files", "Graphile Migrate", "Sqitch"),
            ("forward-only migrations reviewed in pull requests", "zero-downtime column changes"),
            ("migrations/README.md",)),
    Concern("caching", ("Postgres UNLOGGED tables", "an in-process LRU", "CDN edge caching", "HTTP cache headers"),
            ("session lookups under load", "cache invalidation across API instances", "hot read paths"),
            ("src/cache.ts",)),
    Concern("authentication", ("httpOnly cookies", "passkeys (WebAuthn)", "short-lived JWTs", "OAuth device flow"),
            ("session tokens out of reach of injected scripts", "CSRF protection", "single sign-on for admins"),
            ("src/auth/session.ts", "src/auth.ts")),
    Concern("the API style", ("REST with OpenAPI", "JSON:API", "gRPC", "tRPC procedures"),
            ("clients fetching exactly the fields they need", "a contract the mobile team can generate code from"),
            ("openapi.yaml", "src/routes.ts")),
    Concern("outbound HTTP", ("native fetch", "undici", "ky", "got"),
            ("calling third-party REST APIs with retries and timeouts", "good error reporting on failed calls"),
            ("src/http.ts",)),
    Concern("search", ("Postgres full-text search", "Meilisearch", "Typesense", "OpenSearch"),
            ("typo-tolerant search over customer records", "faceted filters"), ("src/search.ts",)),
    Concern("file storage", ("S3-compatible object storage", "Cloudflare R2", "signed upload URLs"),
            ("large user uploads", "keeping files out of the database"), ("src/uploads.ts", "src/storage.ts")),
    Concern("observability", ("OpenTelemetry", "Sentry", "Prometheus metrics", "Grafana Tempo"),
            ("traces across services", "alerting on error rates", "latency dashboards per endpoint"),
            ("src/telemetry.ts", "src/metrics.ts")),
    Concern("continuous integration", ("GitHub Actions", "Buildkite", "CircleCI"),
            ("one reusable workflow for every package", "caching dependencies between runs"),
            ("~/.github/workflows/ci.yml",)),
    Concern("deployment", ("ECS Fargate", "Fly.io", "Cloud Run", "plain VMs with systemd"),
            ("rolling deploys without a cluster to run", "preview environments per pull request"),
            ("Dockerfile", "~/infra/ecs/service.tf")),
    Concern("bundling", ("Vite", "esbuild", "tsup", "Webpack", "Rollup"),
            ("fast dev server start", "small production bundles", "library builds with type declarations"),
            ("vite.config.ts", "webpack.config.js")),
    Concern("internationalisation", ("FormatJS", "i18next", "Lingui"),
            ("UI strings in a translation catalog", "plural rules per locale"), ("src/i18n.ts",)),
    Concern("transactional email", ("Postmark", "Amazon SES", "Resend"),
            ("password reset and receipt emails", "bounce handling"), ("src/email.ts",)),
    Concern("billing", ("Stripe Billing", "Paddle", "in-house invoicing"),
            ("usage-based invoices", "tax handling across countries"), ("src/billing.ts",)),
    Concern("rate limiting", ("a token bucket per API key", "a sliding window in Postgres",
                              "Cloudflare rate limiting rules"),
            ("protecting the public API from bursts", "fair use per tenant"),
            ("src/middleware.ts", "src/ratelimit.ts")),
    Concern("error responses", ("problem+json", "a custom error envelope"),
            ("machine-readable error codes", "consistent error bodies across endpoints"), ("src/errors.ts",)),
    Concern("monorepo tooling", ("pnpm workspaces", "Turborepo", "Nx"),
            ("strict dependency boundaries between packages", "cached builds"),
            ("~/pnpm-workspace.yaml", "~/turbo.json")),
    Concern("linting and formatting", ("ESLint flat config", "Biome", "Prettier"),
            ("one shared config for every package", "formatting on save"), ("~/eslint.config.js",)),
    Concern("date handling", ("date-fns", "the Temporal polyfill", "Luxon", "Day.js"),
            ("time zones in scheduled reports", "immutable date values"), ("src/dates.ts",)),
    Concern("realtime updates", ("Server-Sent Events", "WebSockets via ws", "Ably", "long polling"),
            ("live status updates on the dashboard", "reconnecting clients after deploys"), ("src/realtime.ts",)),
    Concern("forms", ("React Hook Form", "TanStack Form", "uncontrolled forms"),
            ("validation messages next to each field", "multi-step forms"), ("src/forms.tsx",)),
    Concern("secrets", ("AWS Secrets Manager", "Doppler", "SOPS-encrypted files"),
            ("rotating database credentials", "secrets out of the repository"), ("src/config.ts",)),
)
AREAS = ("packages/api", "apps/dashboard", "apps/admin", "apps/mobile-web", "services/webhooks", "services/billing",
         "services/search", "services/notifications", "services/ingest", "services/reports", "packages/sdk",
         "packages/ui", "packages/worker", "apps/docs", "packages/auth")
DECISIONS = (
    "Use {choice} for {topic} in {area}",
    "{area}: {topic} goes through {choice}",
    "Standardise {topic} on {choice} across {area}",
    "Adopt {choice} for {topic} in {area}",
    "Keep {topic} in {area} on {choice}",
    "Move {area} {topic} to {choice}",
    "{area}: {choice} for {detail}",
)
RATIONALES = (
    "We need {detail}; {choice} covered it in the {n}-week spike without new infrastructure",
    "{choice} gives {area} {detail} out of the box, where the alternatives needed custom code",
    "For {detail}, {choice} was the only option the whole team could debug at 3 a.m.",
    "{choice} covered every {topic} case in the {n}-week spike and cut p95 latency by {pct}%",
    "The team already knows {choice}; a {lines}-line wrapper gives {area} everything it needs for {topic}",
    "{choice} keeps {topic} boring: {pct}% less code than the alternatives we prototyped, same behaviour locally "
    "and in CI",
    "Measured on our own {topic} workload: {pct}% faster than what it replaced, with no new infrastructure",
    "Fewer moving parts: {choice} needs no extra service to run, monitor or secure for {topic}",
    "Picked after the {month} incident review: {topic} failures in {area} were hard to trace before {choice}",
    "{choice} is what the other services already run, so on-call for {topic} needs one runbook, not {n}",
)
REASONS = (
    "Evaluated in {month}; migration cost with no gain our users would notice",
    "Larger dependency surface and slower cold starts in {area}",
    "Needs another service to provision, monitor and secure for {topic}",
    "Pricing did not fit at our volume of {rps} events a day",
    "Its {topic} model fought our functional codebase style during the spike",
    "The {n}-day prototype still missed retries, timeouts and good error reporting",
    "Two engineers cannot carry its upgrade cadence next to everything else",
)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


def _file(area: str, stem: str) -> str:
    return stem[2:] if stem.startswith("~/") else f"{area}/{stem}"


def _excluded(name: str, exclude: Sequence[str]) -> bool:
    return any(names_match(name, x) or names_match(x, name) for x in exclude)


def distractors(n: int, *, as_of: datetime, seed: int = DEFAULT_SEED, exclude: Sequence[str] = (),
                id_prefix: str = "g") -> tuple[Decision, ...]:
    """``n`` generated decisions, deterministic for ``seed`` and nested (a prefix of any longer run); no choice
    or rejected option matches a name in ``exclude``; contents are unique."""
    rng = random.Random(seed)
    concerns = [c for c in ((c, tuple(x for x in c.choices if not _excluded(x, exclude))) for c in CONCERNS)
                if len(c[1]) >= 2]
    out: list[Decision] = []
    seen: set[str] = set()
    while len(out) < n:
        concern, choices = rng.choice(concerns)
        area = rng.choice(AREAS)
        choice = rng.choice(choices)
        values = {"choice": choice, "topic": concern.topic, "detail": rng.choice(concern.details), "area": area,
                  "n": rng.randint(2, 6),
                  "pct": rng.randint(12, 70), "lines": rng.randint(20, 120),
                  "rps": rng.choice((800, 2000, 5000, 12000)),
                  "month": rng.choice(MONTHS)}
        decision = rng.choice(DECISIONS).format(**values)
        rationale = rng.choice(RATIONALES).format(**values)
        others = [c for c in choices if c != choice]
        rejected = tuple(Rejection(o, rng.choice(REASONS).format(**values))
                         for o in rng.sample(others, min(len(others), rng.choice((0, 1, 1, 2)))))
        stems = rng.sample(concern.files, rng.randint(1, len(concern.files)))
        files = tuple(dict.fromkeys(_file(area, stem) for stem in stems))
        created = (as_of - timedelta(days=rng.randint(1, 540))).replace(hour=10, minute=0, second=0, microsecond=0)
        reviewed = created + timedelta(days=1) if rng.random() < 0.8 else None
        relevance = round(rng.uniform(0.3, 0.85), 2)
        text = f"{decision} {rationale}"
        if text in seen:
            continue
        seen.add(text)
        out.append(Decision(f"{id_prefix}{len(out) + 1:04d}", decision, rationale, rejected, files, created,
                            reviewed, relevance))
    return tuple(out)


@dataclass(frozen=True)
class ScalePoint:
    size: int
    scores: tuple[VetoScore, ...]
    seconds: float


def grow(suite: VetoSuite, size: int, pool: Sequence[Decision]) -> Dataset:
    """The suite padded with the first ``size - |active|`` decisions of ``pool``, as a data set."""
    base = len(suite.active)
    if size < base:
        raise BenchError(f"-veto-sizes {size}: smaller than the suite's {base} decisions")
    if size - base > len(pool):
        raise BenchError(f"-veto-sizes {size}: only {len(pool)} distractors were generated")
    grown = suite.with_decisions(tuple(pool[: size - base]))
    return suite_dataset(grown).with_(name=f"{suite.name}-n{size}")


def curve(suite: VetoSuite, systems_for: Callable[[Dataset], Sequence[System]], sizes: Sequence[int] = DEFAULT_SIZES,
          *, seed: int = DEFAULT_SEED, echo: Callable[[str], None] = lambda m: None,
          guard: RunGuardOptions | None = None) -> list[ScalePoint]:
    """Veto recall of fresh systems (``systems_for(dataset)``) on the suite grown to each size (``guard``: the
    run's checks, as ``evaluate``)."""
    import time

    pool = distractors(max(sizes) - len(suite.active), as_of=suite.as_of, seed=seed,
                       exclude=[s.rejected_option for s in suite.scenarios])
    points = []
    for size in sorted(sizes):
        t0 = time.perf_counter()
        ds = grow(suite, size, pool)
        _, scores = evaluate(systems_for(ds), ds, guard=guard)
        points.append(ScalePoint(size, tuple(scores), time.perf_counter() - t0))
        echo(f"scale: {size} decisions done in {points[-1].seconds:.1f} s")
    return points


def markdown(points: Sequence[ScalePoint], suite: str) -> str:
    """Veto recall@5 per system (rows) and decision-log size (columns), through the one table model."""
    systems = list(dict.fromkeys(s.system for p in points for s in p.scores))
    cols = (Column("system", "System", "left"), *(Column(str(p.size), str(p.size)) for p in points))
    body = []
    for name in systems:
        values = [next((s.recall[5] for s in p.scores if s.system == name), None) for p in points]
        body.append((Cell(name, name), *(Cell(v, fmt_num(v)) for v in values)))
    table = Table(cols, tuple(body), title=f"## {suite}: veto recall@5 as the decision log grows (generated "
                                           "distractors)")
    return render_table(table, "md") + "\n"


def as_json(points: Sequence[ScalePoint]) -> list[dict]:
    return [{"size": p.size, "seconds": p.seconds,
             "systems": [{"system": s.system, **{f"veto_recall@{k}": v for k, v in s.recall.items()},
                          "ranks": s.ranks} for s in p.scores]} for p in points]


def plot(points: Sequence[ScalePoint], path: Path, title: str, base: int) -> None:
    """A PNG: veto recall@5 against the number of decisions (log x), one line per system; written atomically."""
    try:
        import matplotlib
    except ImportError:
        raise BenchError(PLOT_NEEDS) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [p.size for p in points]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for name in dict.fromkeys(s.system for p in points for s in p.scores):
        ys = [next((s.recall[5] for s in p.scores if s.system == name), float("nan")) for p in points]
        ax.plot(sizes, ys, marker="o", label=name)
    ax.set_xscale("log")
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(f"decisions in the log ({base} real + generated distractors)")
    ax.set_ylabel("veto recall@5")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(path, lambda w: w(buf.getvalue()))
