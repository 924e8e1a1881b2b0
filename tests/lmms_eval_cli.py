"""lmms-eval's own command line (``python -m lmms_eval ...``), with one shim; run by the python
of the lmms-eval virtualenv ``./dev.sh`` makes (``ensure_lmms_eval``), never by foilkit's own.

usage: ``python lmms_eval_cli.py ARGS...``, ARGS as ``lmms-eval`` takes them.
``tests/test_imports_lmms_eval.py`` runs it with ``--log_samples`` on a tiny model folder and
imports the samples file it writes.

The shim: ``llava_hf`` (``lmms_eval/models/simple/llava_hf.py``) maps the config's
``model_type`` to a transformers class for ``llava``, ``llava_next`` and ``llava_onevision``
only, so a LLaVA-NeXT-Video folder is a ``KeyError``; the entry added names transformers'
``LlavaNextVideoForConditionalGeneration`` (as ``tests/lmms_eval_loglikelihood.py`` does).
Nothing else of lmms-eval is changed: its CLI, task, model class, filters and sample logger run
as released.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    from lmms_eval.__main__ import cli_evaluate
    from lmms_eval.models.simple import llava_hf
    from transformers import LlavaNextVideoForConditionalGeneration

    llava_hf.model_map["llava_next_video"] = LlavaNextVideoForConditionalGeneration
    sys.argv = ["lmms-eval", *argv]
    cli_evaluate()


if __name__ == "__main__":
    main(sys.argv[1:])
