"""The Hub Space of the ``winoground_score`` evaluate module: its Gradio widget."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# By file, not by folder: evaluate.load(folder) loads <folder name>.py, and a Space runs from a
# folder named app/, where that is this very file.
module = evaluate.load(str(Path(__file__).with_name("winoground_score.py")))
launch_gradio_widget(module)
