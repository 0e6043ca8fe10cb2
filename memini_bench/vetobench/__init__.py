"""VetoBench (RoBrain's ``packages/vetobench``, Apache-2.0): does memory surface an approach the team already
rejected when a task invites it again? See ``docs`` in the shared folder (``vetobench.md``) for the behaviour.

- the corpus / scenarios files are read and checked by ``loaders.vetobench`` (with the lifecycle carry-over of
  vetoes).
- ``composite``: the five-signal scorer as a System (``veto-composite``).
- ``evaluate``: veto recall@1/@5, the rank of every veto, per trap kind, for any System.
- ``scale``: realistic distractor decisions and the veto recall curve as the corpus grows.
- ``judge`` and ``live``: the behavioural layer (an agent behind an OpenAI-compatible endpoint, a deterministic
  judge, archives); ``conditions`` and ``context``: what each memory condition puts in front of the agent;
  ``transcripts``: the decisions as session prose for systems that ingest on their own; ``extract``: our
  extraction prompt (``extract-e2e``); ``summary`` and ``absence``: the min-max summary of archives and veto absence.
"""
