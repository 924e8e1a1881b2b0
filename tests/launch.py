"""How the tests start several CPU processes: ``accelerate launch`` as a user would type it.

``accelerate launch --cpu`` runs ONE process (it leaves more to mpirun); ``--multi_gpu`` starts
a torchrun group, which foilkit runs over gloo when there is no accelerator.
"""

from __future__ import annotations

import sys
from pathlib import Path


def accelerate_launch(num_processes: int = 2) -> list[str]:
    """The ``accelerate launch`` command line for ``num_processes`` local CPU processes."""
    return [
        str(Path(sys.executable).with_name("accelerate")),
        "launch",
        "--multi_gpu",
        "--num_processes",
        str(num_processes),
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
    ]
