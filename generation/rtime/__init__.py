"""RTime's text pipelines (Du et al., §3.1 and supplementary §7-9) through any LLM server.

* :mod:`.activities` -- seed (activity, temporally opposite activity) pairs and their few-shot
  LLM expansion (step 1, Tab. 7);
* :mod:`.curation` -- the human curation files (``keep`` column) and their import (§7);
* :mod:`.enrichment` -- concrete objects for each activity's ``[something]`` (step 2, Tab. 8);
* :mod:`.rewrites` -- nine rewrites per human train caption, filtered by sentence-embedding
  similarity (the Fig. 10 check) and by :mod:`.temporal_words` (step 3, Tab. 9);
* :mod:`.captions` -- caption rows in (JSONL or an RTime annotation file) and back;
* :mod:`.replies` -- list replies read robustly;
* ``prompts/`` -- the prompts as data (:class:`~foilkit.generation.prompts.PromptTemplate`
  files), loaded by name with :func:`load_prompt`.

``foilkit generate rtime <stage>`` (:mod:`.cli`) runs each step from files.
"""

from __future__ import annotations

import os
from pathlib import Path

from foilkit.generation.prompts import PromptTemplate

PROMPTS_DIR = Path(__file__).parent / "prompts"


def load_prompt(name_or_path: str | os.PathLike) -> PromptTemplate:
    """A packaged RTime prompt by name (``"rewrite_caption"``) or a prompt file by path."""
    return PromptTemplate.load(name_or_path, folder=PROMPTS_DIR)
