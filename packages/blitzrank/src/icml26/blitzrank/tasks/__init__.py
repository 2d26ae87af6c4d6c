"""The run's reranking tasks, each a method step that ``experiment.run`` calls as one stage.

* :mod:`~icml26.blitzrank.tasks.simulated`: simulated reranking per noise (``sim_pl``,
  ``sim_bt``), the realistic-oracle spectrum (``sim_persist<pct>``, ``sim_position``) and the
  noise sweep;
* :mod:`~icml26.blitzrank.tasks.certification`: calls to certify with a perfect oracle, and
  certification on a budget under an adversarially cyclic oracle (``sim_cyclic``);
* :mod:`~icml26.blitzrank.tasks.minilm`: the real-model oracle (MiniLM's judgements of factbook
  passages; extra ``minilm``);
* :mod:`~icml26.blitzrank.tasks.llm`: real text reranked by a local LLM or an endpoint.

Each takes the run's :class:`~icml26.blitzrank.config.RunConfig` and returns plain JSON values
(a stage's file), so a killed run resumes at its first unfinished task.
"""
