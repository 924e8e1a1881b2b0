"""The Hub Space of the ``retrieval_recall`` evaluate module: its Gradio widget."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# by file, not folder: a Space's folder is not named after the module
module = evaluate.load(str(Path(__file__).with_name("retrieval_recall.py")))
launch_gradio_widget(module)
