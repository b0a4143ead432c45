"""The safe-file layer: every byte the toolkit reads or writes, and the secrets kept out of it.

* :mod:`.files` — the one opener of inputs (regular files, bounded reads), the one SHA-256 of a file,
  the one way to replace an output file;
* :mod:`.jsonio` — every JSON / JSONL file written or read, with its documented rules and limits;
* :mod:`.scrub` — secrets out of everything written or printed (URLs, known keys, log records);
* :mod:`.cache` — the cache directory; :mod:`.extras` — the install command of an optional extra;
* :mod:`.console` — our warnings as one line in the toolkit's voice, once per cause.

May import: nothing of the toolkit (the standard library and third-party packages only).
"""
