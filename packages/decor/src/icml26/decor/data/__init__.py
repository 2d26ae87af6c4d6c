"""The deep-search environment's data: the CIA World Factbook corpus and its multi-hop
questions (:mod:`~icml26.decor.data.factbook`), a user's corpus and questions
(:mod:`~icml26.decor.data.user`), and their records (:mod:`~icml26.decor.data.types`).
"""
