"""RTime's text pipelines (Du et al., §3.1 and supplementary §7-9) through any LLM server.

* :mod:`.activities` -- seed (activity, temporally opposite activity) pairs and their few-shot
  LLM expansion (step 1, Tab. 7);
* :mod:`.curation` -- the human curation files (``keep`` column) and their import (§7);
* :mod:`.enrichment` -- concrete objects for each activity's ``[something]`` (step 2, Tab. 8);
* :mod:`.rewrites` -- nine rewrites per human train caption, filtered by sentence-embedding
  similarity (the Fig. 10 check) and by :mod:`.temporal_words` (step 3, Tab. 9);
* :mod:`.captions` -- caption rows in (JSONL or an RTime annotation file) and back;
* :mod:`.prompt_templates`, :mod:`.replies` -- prompts as data, list replies read robustly.

``foilkit generate rtime <stage>`` (:mod:`.cli`) runs each step from files.
"""
