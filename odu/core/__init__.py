"""The paper: what ODU-Bench is and how a scene is scored (App A, D, F), with no plumbing.

* :mod:`.constants` — the paper's values (Eq. 6 weights, closed sets) and the scorer's open choices;
* :mod:`.schema` — scenes, annotations, key points and predictions (App A.1, Fig. 6);
* :mod:`.prompts` — the prediction instruction and turn layout a model sees (App F.1, F.2, D.1, D.2);
* :mod:`.parse` — model output text to a prediction (App A.1: lenient extraction, strict validation);
* :mod:`.match` and :mod:`.text` — reference and predicted segments paired (App A.2), text normalised;
* :mod:`.metrics` — scene and dataset scores, M1-M5, FTR and Avg (App A.3-A.4, Eqs. 1-6);
* :mod:`.tables` — Table 3-style text tables; :mod:`.caveats` — what qualifies a run's numbers;
* :mod:`.citation` — the one BibTeX entry.

May import: :mod:`odu.io` (the safe-file layer) and nothing else of the toolkit; none of
``datasets``, ``lm_eval``, ``evaluate``, ``openai``, ``numpy`` or ``torch``.
"""
