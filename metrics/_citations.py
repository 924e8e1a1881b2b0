"""The papers behind foilkit's benchmarks, as BibTeX: one place for the metric cards and the
dataset cards.

Each ``metrics/<name>/`` folder links this file as ``_citations.py`` (as it links
``_common.py``), so a metric stays a self-contained ``evaluate`` module; the builders import it
as ``foilkit.metrics.CITATIONS`` (benchmark name -> BibTeX).
"""

VITATECS = """\
@article{li2023vitatecs,
  title   = {{VITATECS}: A Diagnostic Dataset for Temporal Concept Understanding of
             Video-Language Models},
  author  = {Li, Shicheng and Li, Lei and Ren, Shuhuai and Liu, Yuanxin and Liu, Yi and
             Gao, Rundong and Sun, Xu and Hou, Lu},
  journal = {arXiv preprint arXiv:2311.17404},
  year    = {2023}
}
"""

VILMA = """\
@inproceedings{kesen2024vilma,
  title     = {{ViLMA}: A Zero-Shot Benchmark for Linguistic and Temporal Grounding in
               Video-Language Models},
  author    = {Kesen, Ilker and Pedrotti, Andrea and Dogan, Mustafa and Cafagna, Michele and
               Acikgoz, Emre Can and Parcalabescu, Letitia and Calixto, Iacer and
               Frank, Anette and Gatt, Albert and Erdem, Aykut and Erdem, Erkut},
  booktitle = {The Twelfth International Conference on Learning Representations (ICLR)},
  year      = {2024}
}
"""

RTIME = """\
@inproceedings{du2024rtime,
  title     = {Reversed in Time: A Novel Temporal-Emphasized Benchmark for Cross-Modal
               Video-Text Retrieval},
  author    = {Du, Yang and Liu, Yuqi and Jin, Qin},
  booktitle = {Proceedings of the 32nd ACM International Conference on Multimedia},
  year      = {2024}
}
"""

CONTRAST_SETS = """\
@inproceedings{park2022exposing,
  title     = {Exposing the Limits of Video-Text Models through Contrast Sets},
  author    = {Park, Jae Sung and Shen, Sheng and Farhadi, Ali and Darrell, Trevor and
               Choi, Yejin and Rohrbach, Anna},
  booktitle = {Proceedings of the 2022 Conference of the North American Chapter of the
               Association for Computational Linguistics: Human Language Technologies},
  pages     = {3574--3586},
  year      = {2022}
}
"""

TEMPCOMPASS = """\
@inproceedings{liu2024tempcompass,
  title     = {{TempCompass}: Do Video {LLMs} Really Understand Videos?},
  author    = {Liu, Yuanxin and Li, Shicheng and Liu, Yi and Wang, Yuxiang and Ren, Shuhuai and
               Li, Lei and Chen, Sishuo and Sun, Xu and Hou, Lu},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2024},
  year      = {2024}
}
"""

TOMATO = """\
@misc{shangguan2024tomato,
  title         = {{TOMATO}: Assessing Visual Temporal Reasoning Capabilities in Multimodal
                   Foundation Models},
  author        = {Shangguan, Ziyao and Li, Chuhan and Ding, Yuxuan and Zheng, Yanan and
                   Zhao, Yilun and Fitzgerald, Tesca and Cohan, Arman},
  year          = {2024},
  eprint        = {2410.23266},
  archivePrefix = {arXiv},
  primaryClass  = {cs.CV}
}
"""

VINOGROUND = """\
@article{zhang2024vinoground,
  title   = {Vinoground: Scrutinizing {LMMs} over Dense Temporal Reasoning with Short Videos},
  author  = {Zhang, Jianrui and Cai, Mu and Lee, Yong Jae},
  journal = {arXiv preprint arXiv:2410.02763},
  year    = {2024}
}
"""

VELOCITI = """\
@inproceedings{saravanan2025velociti,
  title     = {{VELOCITI}: Benchmarking Video-Language Compositional Reasoning with Strict
               Entailment},
  author    = {Saravanan, Darshana and Gupta, Varun and Singh, Darshan and Khan, Zeeshan and
               Gandhi, Vineet and Tapaswi, Makarand},
  booktitle = {Computer Vision and Pattern Recognition (CVPR)},
  year      = {2025}
}
"""

TEMPORALBENCH = """\
@article{cai2024temporalbench,
  title   = {{TemporalBench}: Towards Fine-grained Temporal Understanding for Multimodal Video
             Models},
  author  = {Cai, Mu and Tan, Reuben and Zhang, Jianrui and Zou, Bocheng and Zhang, Kai and
             Yao, Feng and Zhu, Fangrui and Gu, Jing and Zhong, Yiwu and Shang, Yuzhang and
             Dou, Yao and Park, Jaden and Gao, Jianfeng and Lee, Yong Jae and Yang, Jianwei},
  journal = {arXiv preprint arXiv:2410.10818},
  year    = {2024}
}
"""

#: benchmark (builder) name -> its paper's BibTeX.
CITATIONS = {
    "vitatecs": VITATECS,
    "vilma": VILMA,
    "rtime": RTIME,
    "contrast_sets": CONTRAST_SETS,
    "tempcompass": TEMPCOMPASS,
    "tomato": TOMATO,
    "vinoground": VINOGROUND,
    "velociti": VELOCITI,
    "temporalbench": TEMPORALBENCH,
}
