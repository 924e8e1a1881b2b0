"""VITATECS' human-in-the-loop counterfactual generation (Li et al., §3.3 and appendix E).

A loop of three stages over (caption, aspect) queries -- in-context generation with an LLM,
automatic filtering (NLI, then a 7-way filter model), human revision -- that grows three exemplar
sets until the filter converges, then a finalisation at scale without humans.

Modules, in pipeline order:

- :mod:`.prompt` -- the prompt template (Tab. 15) and aspect texts (Tab. 16-18), from ``data/``
- :mod:`.exemplars` -- ``ExemplarSets`` (positive per aspect, negative, N/A), versioned files
- :mod:`.generate` -- ``Query``, ``Candidate``, ``generate_candidates``, ``parse_answer``
- :mod:`.filtering` -- ``apply_nli``, ``apply_filter_model``, ``apply_toxicity``
- :mod:`.filter_model` -- ``AspectFilter`` (fine-tuning, both-order product, margin), metrics
- :mod:`.synonyms` -- synonym replacement for augmentation (builtin list or WordNet)
- :mod:`.toxicity` -- the safety filter hook
- :mod:`.revision` -- export for annotators, import of their labels
- :mod:`.diversity`, :mod:`.finalize` -- selection by rare verb changes, the final dataset
- :mod:`.config`, :mod:`.loop`, :mod:`.stages`, :mod:`.cli` -- configuration, loop folder, CLI
"""
