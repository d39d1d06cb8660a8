"""Model families from one table, on real judge spec strings and published judge names: the
disjointness rules (probe building, C8 evaluator, CAP testbed gate) and their unknown case."""

from __future__ import annotations

from pathlib import Path

import pytest

import judgeaudit
from judgeaudit.analyses.cap_design import check_evaluator_family
from judgeaudit.datasets import published
from judgeaudit.datasets._common import table_family
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.probes.build import BaseItem, build_probes

BASE = [BaseItem(claim="The method may reduce error by a tenth.", evidence="One study found 9% less error.",
                 group="g", domain="d", base_id="b1")]


def _build(gen: str, ver: str, audited: list[str], **gen_opts):
    return build_probes(BASE, ["reordering"], make_judge(gen, **gen_opts), make_judge(ver), audited_families=audited)


@pytest.mark.parametrize(("spec", "family"), [
    ("api:openai/gpt-4o", "openai"),
    ("api:openai/o3-mini", "openai"),
    ("api:openrouter/openai/o1-mini-2024-09-12", "openai"),
    ("api:azure/gpt-35-turbo", "openai"),
    ("api:anthropic/claude-3-5-haiku-20241022", "anthropic"),
    ("api:bedrock/anthropic.claude-3-haiku-20240307-v1:0", "anthropic"),
    ("api:gemini/gemini-2.5-flash", "google"),
    ("api:vertex_ai/chat-bison", "google"),
    ("api:together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", "meta"),
    ("api:mistral/open-mixtral-8x7b", "mistral"),
    ("api:openrouter/qwen/qwen-2.5-72b-instruct", "alibaba"),
    ("api:deepseek/deepseek-chat", "deepseek"),
    ("api:xai/grok-2", "xai"),
    ("api:cohere/command-r-plus", "cohere"),
    ("hf:google/gemma-2-9b-it", "google"),
    ("hf:microsoft/Phi-3-mini-4k-instruct", "microsoft"),
    ("hf:01-ai/Yi-1.5-9B-Chat", "01-ai"),
    ("hf:internlm/internlm2-7b-reward", "shanghai-ai-lab"),
    ("hf:nvidia/Nemotron-4-340B-Reward", "nvidia"),
    # a fine-tune belongs to its base model's family and to its trainer's when the table knows it
    ("hf:Skywork/Skywork-Reward-Gemma-2-27B", "google+skywork"),
    ("hf:Ray2333/GRM-Gemma-2B-rewardmodel-ft", "google"),
    ("local", "google"),
])
def test_spec_family_comes_from_the_table(spec, family):
    assert make_judge(spec).spec.family == family


def test_unknown_models_have_no_family_and_the_provider_prefix_is_not_one():
    # openai/ is any OpenAI-compatible server: the prefix says nothing about the weights
    assert make_judge("api:openai/acme-judge-1").spec.family is None
    assert make_judge("hf:./models/acme-7b").spec.family is None
    # the first dash token is not a family: "my-..." models do not share one
    assert make_judge("api:openai/my-model-a").spec.family is None


def test_family_override_in_the_spec_and_as_an_option():
    j = make_judge("api:openai/my-ft?family=openai")
    assert (j.spec.model, j.spec.family) == ("openai/my-ft", "openai")
    assert make_judge("api:openai/acme-judge", family="Acme").spec.family == "acme"
    assert make_judge("hf:./models/acme-7b?family=gemma").spec.family == "google"  # a model line names its vendor
    with pytest.raises(InputError, match="only \\?family="):
        make_judge("api:openai/my-ft?temp=0")


def test_published_judge_names_get_the_table_family():
    from judgeaudit.datasets._common import family_of

    assert {m: family_of(m) for m in ("GPT-4", "ChatGPT-0301", "PaLM2", "LLaMA2", "Falcon")} == {
        "GPT-4": "openai", "ChatGPT-0301": "openai", "PaLM2": "google", "LLaMA2": "meta", "Falcon": "tii"}
    jb = {"Skywork_Skywork-Reward-Gemma-2-27B": "google+skywork", "Skywork_Skywork-Reward-Llama-3.1-8B": "meta+skywork",
          "internlm_internlm2-20b-reward": "shanghai-ai-lab", "claude-3-haiku-20240307": "anthropic",
          "o1-mini-2024-09-12": "openai", "Ray2333_GRM-Gemma-2B-rewardmodel-ft": "google"}
    assert {m: family_of(m) for m in jb} == jb


def test_gpt4o_and_o3mini_are_one_family_for_generator_and_verifier():
    with pytest.raises(InputError, match="share family 'openai'"):
        _build("api:openai/gpt-4o", "api:openai/o3-mini", ["google"])


def test_audited_family_overlap_uses_vendors():
    # "gemma" names Google's family: a Gemini generator may not build probes for a Gemma judge
    with pytest.raises(InputError, match="generator family 'google' is also an audited family"):
        _build("api:gemini/gemini-2.5-flash", "api:anthropic/claude-3-5-haiku-20241022", ["gemma"])
    # a Gemma-based reward model audited against a Gemini generator shares google
    with pytest.raises(InputError, match="also an audited family"):
        _build("api:gemini/gemini-2.5-flash", "api:anthropic/claude-3-5-haiku-20241022",
               [make_judge("hf:Skywork/Skywork-Reward-Gemma-2-27B").spec.family])


def test_two_unknown_models_are_refused_asking_for_family_not_as_one_family():
    with pytest.raises(InputError) as e:
        _build("api:openai/acme-gen", "api:openai/acme-ver", ["google"])
    msg = str(e.value)
    assert "family=" in msg and "share family" not in msg
    # naming the families lets the build proceed past the rule (it then fails on the missing server)
    gen, ver = make_judge("api:openai/acme-gen?family=acme"), make_judge("api:openai/acme-ver", family="beta")
    from judgeaudit.probes.build import check_families
    rec = check_families(gen.spec.family, ver.spec.family, ["google"], False)
    assert rec == {"generator": "acme", "verifier": "beta", "audited": ["google"], "override": False, "violations": []}


def test_ensembles_are_vendor_sets():
    from judgeaudit.families import shared

    ens = make_judge("ensemble:api:openai/gpt-4o,api:anthropic/claude-3-5-haiku-20241022")
    assert ens.spec.family == "anthropic+openai"
    assert shared(ens.spec.family, "openai") == {"openai"}
    assert shared(ens.spec.family, make_judge("api:gemini/gemini-2.5-pro").spec.family) == frozenset()
    # one unknown member makes the ensemble unknown for the disjointness rule
    assert make_judge("ensemble:api:openai/gpt-4o,api:openai/acme-judge").spec.family is None
    assert make_judge("vote:3:api:openai/o3-mini").spec.family == "openai"


def test_reference_instruments_have_no_family():
    from judgeaudit.families import REFERENCE, shared

    ref = make_judge("reference:constant")
    assert ref.spec.family == REFERENCE
    assert shared(REFERENCE, "openai") == frozenset() and shared(REFERENCE, REFERENCE) == frozenset()
    assert make_judge("ensemble:reference:constant,api:openai/gpt-4o").spec.family == "openai"
    with pytest.raises(InputError, match="no family"):
        make_judge("reference:constant", family="openai")


def test_parse_family_canonical_forms():
    from judgeaudit.families import parse_family

    assert parse_family("GPT") == "openai" and parse_family("unknown") is None and parse_family("") is None
    assert parse_family("openai+Claude") == "anthropic+openai"
    assert parse_family("fam-a") == "fam-a"


@pytest.mark.data
def test_claude_evaluator_is_caught_against_a_published_anthropic_judge(data_dir):
    tables = published.published_judges(data_dir / "judgebench")
    families = {j: table_family(t) for j, t in tables.items()}
    assert families["arena_hard/claude-3-haiku-20240307"] == "anthropic"
    evaluator = make_judge("api:anthropic/claude-3-5-haiku-20241022")
    with pytest.raises(InputError, match="arena_hard/claude-3-haiku-20240307"):
        check_evaluator_family(evaluator.spec.family, families)
    assert check_evaluator_family(evaluator.spec.family, families, allow_same_family=True) == [
        "arena_hard/claude-3-haiku-20240307"]
    # another vendor passes; an evaluator of unknown family is refused and asked for family=
    assert check_evaluator_family(make_judge("api:xai/grok-2").spec.family, families) == []
    with pytest.raises(InputError, match="family="):
        check_evaluator_family(make_judge("api:openai/acme-evaluator").spec.family, families)


def test_cap_testbed_gate_of_the_generators_vendor_is_refused(tmp_path):
    import pandas as pd

    from judgeaudit.probes import cap_testbed

    src = pd.DataFrame({"question": ["How many legs has a spider?"], "answer": ["Eight"]})
    closed = {"api_base": "http://127.0.0.1:9/v1"}  # nothing is asked: the rule comes first
    with pytest.raises(InputError, match="shares the generator's family 'openai'"):
        cap_testbed.build_testbed(src, generator=make_judge("api:openai/gpt-4o", **closed),
                                  gate=make_judge("api:openai/o3-mini", **closed), store_path=tmp_path / "c.sqlite")
    with pytest.raises(InputError, match="family="):
        cap_testbed.build_testbed(src, generator=make_judge("api:openai/acme-gen", **closed),
                                  gate=make_judge("api:openai/acme-gate", **closed), store_path=tmp_path / "c.sqlite")


def test_a_distill_named_by_its_trainer_shares_its_base_family():
    # Ollama's deepseek-r1:7b is DeepSeek-R1 distilled into Qwen2.5-7B: a Qwen judge is its family
    with pytest.raises(InputError, match="also an audited family"):
        _build("api:ollama/deepseek-r1:7b", "api:anthropic/claude-3-5-haiku-20241022", ["qwen"])
    with pytest.raises(InputError, match="share family 'meta'"):
        _build("api:ollama/deepseek-r1:70b", "api:together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", ["google"])


def test_a_brand_without_its_base_is_refused_in_one_line_asking_for_family():
    # OpenReasoning-Nemotron-7B is a Qwen2.5: NVIDIA's brand alone does not make it disjoint from Qwen
    assert make_judge("hf:nvidia/OpenReasoning-Nemotron-7B").spec.family is None
    with pytest.raises(InputError) as e:
        _build("api:openai/gpt-4o", "hf:nvidia/OpenReasoning-Nemotron-7B", ["qwen"])
    msg = str(e.value)
    assert "\n" not in msg and "family=" in msg and "verifier" in msg
    assert make_judge("hf:nvidia/OpenReasoning-Nemotron-7B?family=qwen+nvidia").spec.family == "alibaba+nvidia"


def _folder(root: Path, name: str, *, card: str | None = None, config: dict | None = None) -> str:
    import json

    d = root / name
    d.mkdir(parents=True)
    if card is not None:
        (d / "README.md").write_text(card, encoding="utf-8")
    if config is not None:
        (d / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(d)


def test_a_local_model_takes_its_base_from_the_card_or_the_config(tmp_path):
    card = "---\nlicense: mit\nbase_model: deepseek-ai/DeepSeek-R1-Distill-Qwen-7B\n---\n# acme-judge\n"
    carded = _folder(tmp_path, "acme-judge", card=card, config={"model_type": "qwen2", "_name_or_path": "/ckpt/7"})
    assert make_judge(f"hf:{carded}").spec.family == "alibaba+deepseek"
    listed = _folder(tmp_path, "merge", card="---\nbase_model:\n- google/gemma-2-9b-it\n- Qwen/Qwen2.5-7B\n---\n")
    assert make_judge(f"hf:{listed}").spec.family == "alibaba+google"
    named = _folder(tmp_path, "ft-3", config={"_name_or_path": "meta-llama/Llama-3.1-8B-Instruct", "model_type": "llama"})
    assert make_judge(f"hf:{named}").spec.family == "meta"
    arch = _folder(tmp_path, "ft-4", config={"architectures": ["Gemma2ForCausalLM"]})
    assert make_judge(f"hf:{arch}").spec.family == "google"
    # the llama layout is many vendors' own pretraining (Yi, DeepSeek LLM, SOLAR): no base
    assert make_judge(f"hf:{_folder(tmp_path, 'ft-5', config={'model_type': 'llama'})}").spec.family is None
    # a card naming a base the table does not know: unknown, whatever the architecture
    unknown_base = _folder(tmp_path, "ft-6", card="---\nbase_model: NousResearch/Nous-Capybara-7B-V1.9\n---\n",
                           config={"model_type": "mistral"})
    assert make_judge(f"hf:{unknown_base}").spec.family is None
    # the user's family= still decides
    assert make_judge(f"hf:{carded}?family=acme").spec.family == "acme"
    # a hub id that is not a folder here is read by name only
    assert make_judge("hf:deepseek-ai/DeepSeek-R1-Distill-Qwen-7B").spec.family == "alibaba+deepseek"
