"""The data wing: from a raw release to the Hugging Face dataset and back to clips.

* :mod:`.release` — reading and validating a raw release (records + media);
* :mod:`.dataset` — features, configs, record <-> row, lazy media of rows;
* :mod:`.prepare` — the script-free parquet dataset directory (``odu-bench prepare``);
* :mod:`.hub` — Hub download / upload of a prepared directory;
* :mod:`.media` — probing and lazy decoding of clips (PyAV, soundfile);
* :mod:`.sample` — where the bundled sample lives, and its prepared copy in the cache.

Package data: ``sample/`` (the bundled synthetic release, written by ``tools/make_sample.py``)
and ``dataset_card.md`` (the card of a prepared dataset). ``datasets`` is imported inside
functions only.
"""
