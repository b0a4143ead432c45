"""ODU-Bench (Omni Demand Understanding) as a ``datasets`` builder.

``datasets`` 5.x runs no loading scripts, so ``load_dataset`` reads the script-free parquet
directory that ``odu-bench prepare`` writes (see the README, "Dataset"). This builder is the same
dataset built straight from a raw release, for direct use::

    from odu_bench import OduBench

    builder = OduBench(config_name="av_en", data_dir="path/to/release")  # default: bundled sample
    builder.download_and_prepare()
    ds = builder.as_dataset(split="test")

It only translates: validation, features, configs and rows come from ``odu.data.release`` and
``odu.data.dataset``. The cache key (``hash``) is the release's fingerprint, so editing the records or
replacing a media file makes a fresh build.
"""

from dataclasses import dataclass

import datasets

from odu.core.citation import BIBTEX
from odu.data import dataset as odu_dataset
from odu.data.release import find_records, fingerprint, read_release

_DESCRIPTION = """\
ODU-Bench asks whether an audio or audio-visual assistant can tell that a user wants something and
infer what. Each scene is a user interaction (one or more clips, with the assistant's replies
between them as text); the final clip is annotated with whether a demand is present and, if so,
its segments: time span, transcript, structured intent, required context, user profile and frozen
key points, in English and Mandarin.
"""

_HOMEPAGE = "https://odubench.github.io"

_VERSION = datasets.Version("1.0.0")

_LICENSE = (
    "Evaluation only. Human-recorded interactions may be used solely to evaluate systems on this "
    "benchmark; commercial use of the dataset or its images is prohibited (paper, Ethics statement)."
)


@dataclass
class OduBenchConfig(datasets.BuilderConfig):
    """BuilderConfig for ODU-Bench: one modality / language / label subset of a raw release.

    Args:
        media_root: folder the clips' ``src`` paths are relative to (default: the records' folder).
        skip_invalid: leave out scenes that fail validation instead of failing the build.
    """

    media_root: str | None = None
    skip_invalid: bool = False


class OduBench(datasets.GeneratorBasedBuilder):
    """ODU-Bench: one row per scene, split ``test``."""

    VERSION = _VERSION
    BUILDER_CONFIG_CLASS = OduBenchConfig
    BUILDER_CONFIGS = [
        OduBenchConfig(name=config.name, version=_VERSION, description=config.description)
        for config in odu_dataset.CONFIGS
    ]
    DEFAULT_CONFIG_NAME = odu_dataset.DEFAULT_CONFIG
    # rows embed their media: keep few in memory while writing
    DEFAULT_WRITER_BATCH_SIZE = 16

    def __init__(self, *args, hash: str | None = None, **kwargs):
        if not kwargs.get("data_dir"):
            from odu.data.sample import sample_dir

            kwargs["data_dir"] = str(sample_dir())
        if hash is None:
            hash = fingerprint(kwargs["data_dir"], kwargs.get("media_root"))[:16]
        super().__init__(*args, hash=hash, **kwargs)

    def _info(self):
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=odu_dataset.features(),
            homepage=_HOMEPAGE,
            license=_LICENSE,
            citation=BIBTEX,
        )

    def _split_generators(self, dl_manager):
        records_path = find_records(self.config.data_dir)
        return [datasets.SplitGenerator(name=datasets.Split.TEST, gen_kwargs={"records_path": str(records_path)})]

    def _generate_examples(self, records_path):
        release = read_release(records_path, self.config.media_root, skip_invalid=self.config.skip_invalid)
        items = odu_dataset.in_config_order(self.config.name, release, lambda item: item.scene)
        if not items:
            raise ValueError(
                f"config {self.config.name!r} has no scenes in {records_path} (datasets cannot build an empty split)"
            )
        for item in items:
            media = [path.read_bytes() for path in item.media_paths]
            yield item.scene_id, odu_dataset.record_to_row(item.record, media)
