"""The hunt against a quantized reference, end to end: llama.cpp on a Q8_0 file of a random model at
Qwen2-0.5B widths (8 layers) is the reference; llama.cpp on the f32 file, and on the Q8_0 file's weights
widened to f32, are the second references whose difference from it is the noise; the NumPy engine computes
in f32 on the Q8_0 file's weights, clean and with each bug. Every stage of a correct engine differs from the
reference by 0.5-4% here, so no fixed threshold tells it from a bug; graded against the noise, the clean
engine passes and every bug is located at its true step, token, layer and stage, in full and in summary
mode (an undecided pair there counts when its rerun, whole tensors on every side, decides it)."""

from __future__ import annotations

import pytest

from examples.numpy_engine.bugs import Bug
from examples.quantized.places import WHERE, WITHIN_NOISE, where
from examples.quantized.traces import engine, model_file, reference
from orchlog.compare import CompareOptions, compare
from orchlog.report import render_text

pytestmark = pytest.mark.slow  # builds llama.cpp (cached) and writes a 490 MB model

KIND = "q8_0"
NOISE = ("f32", "q8_0-widened")

# The signature the diagnosis names at each bug's first divergence, against the noise (docs/diagnose.md).
SIGNATURE = {
    Bug.NO_QKV_BIAS: "offset",
    Bug.ROPE_K_PER_Q_HEAD: "rotation_within_heads",
    Bug.NORM_WEIGHT_TWICE: "per_channel_scale",
    Bug.SKIPPED_ATTN_RESIDUAL: "equals_other_checkpoint",
    Bug.DECODE_POSITION_OFF_BY_ONE: "rotation_within_heads",
    Bug.LAST_LAYER_NO_V_BIAS: "offset",
    Bug.ATTN_NORM_WITHOUT_WEIGHT: "per_channel_scale",
    Bug.KQ_UNSCALED: "softmax_temperature",
    Bug.EPS_HARD_CODED: "per_token_scale",
}
# Bugs whose first effect is under 3x the noise there (measured: 1.84x and 2.17x).
SUBTLE = (Bug.SKIPPED_ATTN_RESIDUAL, Bug.EPS_HARD_CODED)


@pytest.fixture(scope="module")
def hunt(tmp_path_factory, llama_programs):
    directory = tmp_path_factory.mktemp("quantized")
    for kind in (KIND, *NOISE):
        model_file(directory, kind, llama_programs)
    return directory, llama_programs


def _compare(hunt, bug: Bug, mode: str, **options):
    directory, programs = hunt
    noise = tuple(str(reference(directory, kind, mode, programs=programs)) for kind in NOISE)
    return compare(
        reference(directory, KIND, mode, programs=programs),
        engine(directory, KIND, bug, mode, programs=programs),
        CompareOptions(noise=noise, **{"diagnose": False, **options}),
    )


@pytest.mark.parametrize("mode", ["full", "summary"])
def test_the_clean_engine_passes_against_the_noisy_reference(hunt, mode):
    report = _compare(hunt, Bug.NONE, mode)
    assert report.status == "ok", render_text(report)[:3000]
    assert report.noise is not None and report.noise.pairs == report.findings.pairs


@pytest.mark.parametrize("tolerances", ["absolute", "default"])
def test_without_the_noise_most_stages_of_the_clean_engine_fail_a_fixed_threshold(hunt, tolerances):
    directory, programs = hunt
    plain = compare(
        reference(directory, KIND, "full", programs=programs),
        engine(directory, KIND, Bug.NONE, "full", programs=programs),
        CompareOptions(tolerances=tolerances, diagnose=False),
    )
    assert plain.status == "diverged" and plain.findings.failed > plain.findings.pairs // 2


def test_with_nothing_said_the_q8_0_preset_grades_and_the_report_says_so(hunt):
    # The preset was measured on another model (examples/quantized/presets.py): the clean engine still passes.
    directory, programs = hunt
    report = compare(
        reference(directory, KIND, "full", programs=programs),
        engine(directory, KIND, Bug.NONE, "full", programs=programs),
        CompareOptions(diagnose=False),
    )
    assert report.status == "ok" and report.tolerances.source.startswith("q8_0 (shipped) (picked:")
    assert report.notes and "q8_0 weights" in report.notes[0] and "--noise" in report.notes[0]


@pytest.mark.parametrize("bug", list(WHERE), ids=lambda b: b.name.lower())
def test_every_bug_is_located_in_full_mode(hunt, bug):
    report = _compare(hunt, bug, "full")
    assert report.status == "diverged"
    assert where(report.first) == WHERE[bug] and report.first.failed, report.first.where()
    if bug in SUBTLE:
        assert 1.25 < report.first.noise_ratio[0] < 3


@pytest.mark.parametrize("bug", list(WHERE), ids=lambda b: b.name.lower())
def test_every_bug_is_located_in_summary_mode_or_decided_there_by_its_rerun(hunt, bug):
    report = _compare(hunt, bug, "summary")
    assert report.status in ("diverged", "undecided")
    assert where(report.first) == WHERE[bug], report.first.where()
    if report.first.failed:
        return
    # Undecided there: rerun that record in full mode on every side, as the report says, and compare.
    directory, programs = hunt
    select = {env.split("ORCH_LOG_SELECT=", 1)[1].strip("'") for _, env in _reruns(report)}
    (selector,) = select
    rerun = compare(
        reference(directory, KIND, "full", selector, programs),
        engine(directory, KIND, bug, "full", selector, programs),
        CompareOptions(noise=tuple(str(reference(directory, k, "full", selector, programs)) for k in NOISE)),
    )
    assert rerun.findings.pairs == 1 and rerun.first is not None and rerun.first.failed
    assert where(rerun.first) == WHERE[bug]


def _reruns(report):
    from orchlog.compare.grading import rerun

    return rerun.commands(report.first.own_keys, noise=True)


@pytest.mark.parametrize("bug", WITHIN_NOISE, ids=lambda b: b.name.lower())
def test_a_difference_smaller_than_the_references_own_noise_passes_in_full_mode(hunt, bug):
    assert _compare(hunt, bug, "full").status == "ok"


@pytest.mark.parametrize("bug", list(SIGNATURE), ids=lambda b: b.name.lower())
def test_the_diagnosis_says_the_bug_entered_at_its_stage_and_names_its_signature(hunt, bug):
    report = _compare(hunt, bug, "full", diagnose=True)
    (diagnosis,) = report.diagnosis
    assert diagnosis.locality.verdict == "introduced", diagnosis.locality.message
    assert SIGNATURE[bug] in {f.kind for f in diagnosis.findings}, [f.message for f in diagnosis.findings]
    if bug is Bug.KQ_UNSCALED:  # at token 1 each head has two cells: the other tokens and heads decide it
        (found,) = [f for f in diagnosis.findings if f.kind == "softmax_temperature"]
        assert found.evidence["slope_is"] == "sqrt(64)"


@pytest.mark.parametrize("kind", ["q8_0", "q4_0"])
def test_llama_cpps_quantized_file_is_within_its_quantization_bound_of_the_f32_file(hunt, kind):
    # orchlog weights: every Q8_0 / Q4_0 weight within half a step (a whole one at the clamped end of Q4_0)
    # of the f32 file it was made from, whatever a fixed tolerance would say (docs/weights.md).
    from orchlog.weights import compare_weights

    directory, programs = hunt
    report = compare_weights(model_file(directory, "f32", programs), model_file(directory, kind, programs))
    quantized = [r for r in report.rows if "quant_ratio" in r.metrics]
    assert report.status == "ok" and len(quantized) >= 8 * 7  # every matrix of every layer
    assert max(r.metrics["quant_ratio"] for r in quantized) <= 1
