"""How to cite ODU-Bench: the one BibTeX entry every door quotes.

``CITATION.cff`` at the repository root says the same for GitHub and citation tools (a test keeps
the two in agreement); the ``datasets`` builder (``odu_bench.py``), the ``evaluate`` metric
(``odu_metric/``) and the dataset card (:func:`odu.data.prepare.card_body`) use :data:`BIBTEX`, and
the Markdown cards quote it verbatim.
"""

from __future__ import annotations

#: The paper on arXiv.
PAPER_URL = "https://arxiv.org/abs/2609.21392"

BIBTEX = """\
@article{chen2026odubench,
  title   = {Omni Demand Understanding: A Benchmark for Contextual User-Intent Inference in
             Multimodal Interaction},
  author  = {Chen, Qi and Chu, Yunfei and He, Haolin and Yang, Yifan and Liu, Zihan and Wang, Yuxuan
             and Ma, Ziyang and Xu, Ruiyang and Gao, Meng and Yan, Yinsong and Wang, Ling and Wang, Hui
             and Huang, Wen and Chen, Yiheng and Yang, Guanrou and Kong, Qiuqiang and Xu, Jin
             and Chen, Xie},
  journal = {arXiv preprint arXiv:2609.21392},
  year    = {2026}
}
"""

__all__ = ["BIBTEX", "PAPER_URL"]
