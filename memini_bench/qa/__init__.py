"""End-to-end QA (memini's ``cmd/qa``): recall, a reader LLM answers from the memories, a judge LLM grades.

``prompts`` holds memini's reader prompt and judge rubrics; ``checkpoint`` the resumable JSONL of graded
questions; ``engine`` the worker pool that makes the calls; ``summary`` the per-arm accuracy, tokens, McNemar
comparisons and their markdown. The mode itself is ``memini_bench.modes.qa``.
"""
