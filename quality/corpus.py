"""The scoreboard's tier-mixed corpus (behaviour doc section 13), with our own sentence templates.

One group (``reserve-eval``); every memory and the clock sit at the same instant (1.7e9 s), importance 0, no
confidence. A memory id is ``<key>-...``, so a hit is on-topic for a query on ``key`` exactly when its id starts
with ``key + "-"``.

Memories (243), in ingest order:
- 10 fact topics: ``<key>-fact`` (semantic) states the topic's decision; for the first 5 a near-duplicate recap
  ``<key>-dup`` (episodic) restates it; 10 chatter lines ``<key>-ep-<j>`` (episodic) name the subject three
  times and never the decision.
- 6 episodic-only topics: 10 chatter lines each.
- 8 distractor facts ``dx-<name>-fact`` (semantic, same template as the facts, never queried).
- 4 confusable episodic-only topics whose subjects share words with fact subjects ("database", "auth", ...):
  10 chatter lines each.
- 20 detail lines ``<key>-detail`` (episodic), one per queried topic, naming the subject in passing and carrying
  one specific detail that only its own question asks for.

Questions (40), in the order they are asked: 10 fact queries (gold: the fact), 6 episodic queries and 4
confusable queries (no gold: any durable returned is an injection), all one "fill me in on <subject>" template;
then the 20 detail questions (gold: the detail line). ``Question.category`` holds the class.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memini_bench.core.dataset import Dataset, Item, Question

GROUP = "reserve-eval"
CLOCK = datetime.fromtimestamp(1_700_000_000, UTC)
CHATTER_PER_TOPIC = 10
CLASSES = ("fact", "episodic", "confusable", "detail")

# key, subject, decision; the first five also get a near-duplicate episodic recap.
FACT_TOPICS = (
    ("auth", "the auth scheme", "bearer tokens on every public route"),
    ("db", "the database engine", "Postgres with pgvector"),
    ("cache", "the cache TTL", "a 10 minute TTL"),
    ("retry", "the retry policy", "exponential backoff capped at 5 tries"),
    ("logs", "the log format", "structured JSON with slog"),
    ("deploy", "the deploy target", "a Kubernetes Helm chart"),
    ("rate", "the rate limiter", "a token-bucket at 100 req/s"),
    ("queue", "the queue backend", "NATS JetStream"),
    ("metrics", "the metrics stack", "Prometheus plus Grafana"),
    ("flags", "the feature flag store", "a Postgres-backed flag table"),
)
NEAR_DUPS = 5
EPISODIC_TOPICS = (
    ("coffee", "the office coffee machine"),
    ("offsite", "the summer team offsite"),
    ("parking", "the parking situation"),
    ("snacks", "the Friday demo snacks"),
    ("desks", "the new standing desks"),
    ("holiday", "the holiday rotation"),
)
DISTRACTOR_FACTS = (
    ("dx-brand", "the company rebrand", "the new logo and a two-color palette"),
    ("dx-hire", "the hiring bar", "two technical interviews plus a take-home"),
    ("dx-perf", "the perf review cycle", "twice-yearly written reviews"),
    ("dx-travel", "the travel policy", "economy under six hours, premium beyond"),
    ("dx-oss", "the open-source policy", "MIT for tools, internal for services"),
    ("dx-sec", "the laptop security baseline", "full-disk encryption and a hardware key"),
    ("dx-meet", "the meeting policy", "no-meeting Wednesdays"),
    ("dx-exp", "the expense process", "receipts over 25 euros filed within a month"),
)
CONFUSABLE_TOPICS = (
    ("dbbackup", "the database backup schedule"),
    ("authoncall", "the auth team on-call rotation"),
    ("cachehw", "the cache server hardware upgrade"),
    ("deployfreeze", "the deploy freeze calendar"),
)
# key -> (detail clause, the question only that detail answers); one per queried topic, in query order.
DETAILS = {
    "auth": ("the security audit found three expired signing keys",
             "How many expired signing keys did the security audit find?"),
    "db": ("the replica lag hit 45 seconds during the migration",
           "How bad did the replica lag get during the migration?"),
    "cache": ("the hit ratio dropped to 62 percent after the last release",
              "What did the hit ratio drop to after the last release?"),
    "retry": ("the outage postmortem was filed as ticket 5281", "Which ticket was the outage postmortem filed as?"),
    "logs": ("the log shipper costs us 300 dollars a month", "What does the log shipper cost us per month?"),
    "deploy": ("the canary caught a memory leak in version 2.3",
               "Which version had the memory leak the canary caught?"),
    "rate": ("one customer fired 1200 requests in a single second",
             "How many requests did that customer fire in a single second?"),
    "queue": ("the consumer backlog grew to 80 thousand messages", "How large did the consumer backlog grow?"),
    "metrics": ("the alert rules page someone about 30 times a night",
                "How many times a night do the alert rules page someone?"),
    "flags": ("Priya built the admin screen for the toggles", "Who built the admin screen for the toggles?"),
    "coffee": ("the grinder burr was replaced in March", "When was the grinder burr replaced?"),
    "offsite": ("the bus to the lake house left two hours late", "How late did the bus to the lake house leave?"),
    "parking": ("visitor permits now cost 8 euros a day", "How much does a visitor permit cost per day now?"),
    "snacks": ("the corner bakery delivered 60 cookies", "How many cookies did the corner bakery deliver?"),
    "desks": ("two desk motors failed in the first week", "How many desk motors failed in the first week?"),
    "holiday": ("Tom covers the first week of January", "Who covers the first week of January?"),
    "dbbackup": ("the restore drill took 3 hours end to end", "How long did the restore drill take end to end?"),
    "authoncall": ("the weekly handover happens every Tuesday at noon", "When does the weekly handover happen?"),
    "cachehw": ("each new node ships with 128GB of memory", "How much memory does each new node ship with?"),
    "deployfreeze": ("the freeze lifts on the second Monday of January", "When does the freeze lift?"),
}


def fact_text(subject: str, decision: str) -> str:
    return f"Decision: for {subject}, we went with {decision}."


def recap_text(subject: str, decision: str) -> str:
    return f"Summary of the discussion: everyone signed off on {decision} for {subject}."


def chatter_text(j: int, subject: str) -> str:
    return (f"Sync #{j}: we went around in circles on {subject} again. Everyone had a view on {subject}, "
            f"and {subject} is still not settled.")


def detail_text(subject: str, detail: str) -> str:
    return f"During the talk about {subject}, somebody pointed out that {detail}, which sidetracked everyone."


def catch_up_query(subject: str) -> str:
    return f"Fill me in on {subject} — where does it stand these days?"


def topic_key(question: Question) -> str:
    """The topic a question is about (its on-topic id prefix)."""
    return dict(question.meta)["key"]


def on_topic(memory_id: str, key: str) -> bool:
    return memory_id.startswith(key + "-")


def build() -> Dataset:
    """The 243-memory, 40-question corpus described in the module docstring."""
    items: list[Item] = []
    questions: list[Question] = []

    def add(item_id: str, content: str, tier: str) -> None:
        items.append(Item(item_id, content, group=GROUP, time=CLOCK, tier=tier))

    def chatter(key: str, subject: str) -> None:
        for j in range(CHATTER_PER_TOPIC):
            add(f"{key}-ep-{j}", chatter_text(j, subject), "episodic")

    def ask(cls: str, key: str, query: str, gold: str = "") -> None:
        questions.append(Question(f"{cls}-{key}", query, (gold,) if gold else (), group=GROUP, category=cls,
                                  now=CLOCK, meta=(("key", key),)))

    for n, (key, subject, decision) in enumerate(FACT_TOPICS):
        add(f"{key}-fact", fact_text(subject, decision), "semantic")
        if n < NEAR_DUPS:
            add(f"{key}-dup", recap_text(subject, decision), "episodic")
        chatter(key, subject)
        ask("fact", key, catch_up_query(subject), f"{key}-fact")
    for key, subject in EPISODIC_TOPICS:
        chatter(key, subject)
        ask("episodic", key, catch_up_query(subject))
    for key, subject, decision in DISTRACTOR_FACTS:
        add(f"{key}-fact", fact_text(subject, decision), "semantic")
    for key, subject in CONFUSABLE_TOPICS:
        chatter(key, subject)
        ask("confusable", key, catch_up_query(subject))
    subjects = {key: subject for key, subject, *_ in FACT_TOPICS + EPISODIC_TOPICS + CONFUSABLE_TOPICS}
    for key, (detail, question) in DETAILS.items():
        add(f"{key}-detail", detail_text(subjects[key], detail), "episodic")
        ask("detail", key, question, f"{key}-detail")
    return Dataset("quality", tuple(items), tuple(questions),
                   notes=("tier-mixed scoreboard corpus (behaviour doc section 13), our own templates",))
