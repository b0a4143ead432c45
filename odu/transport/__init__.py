"""The one client of model and judge servers.

* :mod:`.openai_client` — keys, retries, deadlines, reply caps, replicas, the batch runner; the only
  module that imports the ``openai`` SDK;
* :mod:`.server_check` — the preflight of a server before the first scene.

May import: :mod:`odu.io`.
"""
