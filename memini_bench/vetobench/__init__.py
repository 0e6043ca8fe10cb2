"""VetoBench (RoBrain's ``packages/vetobench``, Apache-2.0): does memory surface an approach the team already
rejected when a task invites it again? See ``docs`` in the shared folder (``vetobench.md``) for the behaviour.

- ``fixtures``: the corpus / scenarios files, checked, with the lifecycle carry-over of vetoes.
- ``composite``: the five-signal scorer as a System (``veto-composite``).
- ``evaluate``: veto recall@1/@5, the rank of every veto, per trap kind, for any System.
- ``scale``: realistic distractor decisions and the veto recall curve as the corpus grows.
- ``judge`` and ``live``: the behavioural layer (an agent behind an OpenAI-compatible endpoint, a deterministic
  judge, archives and their min-max summary).
"""
