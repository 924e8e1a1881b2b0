"""Where a video LLM runs, by name (``--backend``): :data:`SERVING_BACKENDS`.

Each entry names a :class:`foilkit.scorers.modes.VideoLLM` subclass, imported on first use, so
the flags (``--backend``'s choices and help) read the names without importing torch. A third
backend (an offline vLLM engine) is one entry here and its class, with a ``serving(options)``
classmethod making what it connects with (the run calls it once, before any work); the modes,
the options and the job stay as they are.
"""

from __future__ import annotations

from typing import Any

from foilkit.registry import Registry

#: Backend name -> its :class:`~foilkit.scorers.modes.VideoLLM` subclass (``--backend``).
SERVING_BACKENDS: Registry[Any] = Registry("backend")
SERVING_BACKENDS.add_lazy(
    "local",
    "foilkit.scorers.adapters.video_llm:VideoLLMAdapter",
    "in this process, with transformers",
)
SERVING_BACKENDS.add_lazy(
    "openai", "foilkit.scorers.served:ServedVideoLLM", "an OpenAI-compatible server (vLLM, ...)"
)
