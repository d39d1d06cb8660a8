"""The family table on real model ids, each with its true family: the base model's vendor (whose
pretraining it shares) plus its trainer's, or unknown (``None``) when the name does not say the base.
Every id is asserted, and so is every disjointness decision the families imply (all pairs)."""

from __future__ import annotations

from itertools import combinations

import pytest

from judgeaudit.families import family_of, shared, vendors

REAL_IDS: dict[str, str | None] = {
    # OpenAI
    "gpt-4o": "openai",
    "gpt-4o-mini-2024-07-18": "openai",
    "openai/gpt-4-turbo": "openai",
    "gpt-3.5-turbo-0125": "openai",
    "o1-preview": "openai",
    "o3-mini": "openai",
    "openrouter/openai/o4-mini": "openai",
    "azure/gpt-35-turbo": "openai",
    "openai/gpt-oss-120b": "openai",
    "text-davinci-003": "openai",
    "gpt-4.1-nano": "openai",
    # Anthropic
    "claude-3-5-sonnet-20241022": "anthropic",
    "anthropic/claude-3-opus-20240229": "anthropic",
    "bedrock/anthropic.claude-3-haiku-20240307-v1:0": "anthropic",
    "claude-sonnet-4-20250514": "anthropic",
    # Google
    "gemini/gemini-1.5-pro": "google",
    "gemini-2.5-flash": "google",
    "google/gemma-2-9b-it": "google",
    "google/gemma-3-27b-it": "google",
    "vertex_ai/chat-bison": "google",
    "google/flan-t5-xxl": "google",
    # Meta
    "meta-llama/Meta-Llama-3.1-70B-Instruct": "meta",
    "meta-llama/Llama-2-13b-chat-hf": "meta",
    "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo": "meta",
    "facebook/opt-13b": "meta",
    "codellama/CodeLlama-34b-Instruct-hf": "meta",
    # Mistral
    "mistralai/Mistral-7B-Instruct-v0.2": "mistral",
    "mistralai/Mixtral-8x22B-Instruct-v0.1": "mistral",
    "mistral/mistral-large-latest": "mistral",
    "codestral-latest": "mistral",
    # Qwen (Alibaba), also as Fireworks serves it
    "Qwen/Qwen2.5-72B-Instruct": "alibaba",
    "Qwen/QwQ-32B": "alibaba",
    "Qwen/Qwen2.5-Math-RM-72B": "alibaba",
    "openrouter/qwen/qwen-2.5-72b-instruct": "alibaba",
    "accounts/fireworks/models/qwen2p5-72b-instruct": "alibaba",
    "fireworks_ai/accounts/fireworks/models/qwen2p5-coder-32b-instruct": "alibaba",
    # DeepSeek
    "deepseek-ai/DeepSeek-V3": "deepseek",
    "deepseek/deepseek-chat": "deepseek",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": "alibaba+deepseek",
    "deepseek-ai/DeepSeek-R1-Distill-Llama-70B": "deepseek+meta",
    # Microsoft: its own Phi, and fine-tunes of other vendors' bases
    "microsoft/Phi-3-mini-4k-instruct": "microsoft",
    "microsoft/phi-4": "microsoft",
    "microsoft/Phi-3.5-MoE-instruct": "microsoft",
    "microsoft/Orca-2-13b": "meta+microsoft",
    "microsoft/wizardlm-2-8x22b": "microsoft+mistral",
    "microsoft/WizardLM-2-7B": "microsoft+mistral",
    "WizardLMTeam/WizardLM-13B-V1.2": "meta+microsoft",
    "microsoft/MAI-DS-R1": "deepseek+microsoft",
    "microsoft/rho-math-7b-v0.1": None,              # a Mistral 7B the name does not say
    # NVIDIA
    "nvidia/Nemotron-4-340B-Reward": "nvidia",
    "nvidia/Llama-3.1-Nemotron-70B-Reward": "meta+nvidia",
    "nvidia/Mistral-NeMo-12B-Instruct": "mistral+nvidia",
    "nvidia/AceMath-72B-RM": "alibaba+nvidia",
    "nvidia/AceMath-7B-Instruct": "alibaba+nvidia",
    "nvidia/OpenMath2-Llama3.1-8B": "meta+nvidia",
    # AllenAI
    "allenai/tulu-2-dpo-70b": "allenai+meta",
    "allenai/tulu-2-70b": "allenai+meta",
    "allenai/Llama-3.1-Tulu-3-8B": "allenai+meta",
    "allenai/OLMo-2-1124-13B-Instruct": "allenai",
    # Nous Research
    "NousResearch/Hermes-3-Llama-3.1-70B": "meta+nous",
    "NousResearch/Nous-Hermes-2-Mixtral-8x7B-DPO": "mistral+nous",
    "NousResearch/Nous-Hermes-2-Mistral-7B-DPO": "mistral+nous",
    # Cohere
    "cohere/command-r-plus": "cohere",
    "CohereForAI/c4ai-command-r-v01": "cohere",
    "CohereForAI/aya-23-35B": "cohere",
    # xAI
    "xai/grok-2": "xai",
    "grok-3-mini": "xai",
    # Amazon
    "bedrock/amazon.nova-pro-v1:0": "amazon",
    "amazon.nova-lite-v1:0": "amazon",
    "bedrock/amazon.titan-text-express-v1": "amazon",
    # MiniMax, Baidu, Tencent, Snowflake
    "MiniMaxAI/MiniMax-Text-01": "minimax",
    "minimax/minimax-m1": "minimax",
    "baidu/ERNIE-4.5-300B-A47B-PT": "baidu",
    "ernie-4.0-8k": "baidu",
    "tencent/Hunyuan-A13B-Instruct": "tencent",
    "tencent/Tencent-Hunyuan-Large": "tencent",
    "Snowflake/snowflake-arctic-instruct": "snowflake",
    # Databricks (MPT came with MosaicML), and Dolly (Pythia)
    "mosaicml/mpt-7b-instruct": "databricks",
    "mosaicml/mpt-30b-chat": "databricks",
    "databricks/dbrx-instruct": "databricks",
    "databricks/dolly-v2-12b": "databricks+eleutherai",
    # judges and reward models fine-tuned from other vendors' bases
    "prometheus-eval/prometheus-7b-v2.0": "kaist+mistral",
    "prometheus-eval/prometheus-8x7b-v2.0": "kaist+mistral",
    "kaist-ai/prometheus-13b-v1.0": "kaist+meta",
    "flowaicom/Flow-Judge-v0.1": "flowai+microsoft",
    "berkeley-nest/Starling-RM-7B-alpha": "berkeley+meta",
    "Nexusflow/Starling-RM-34B": "01-ai+nexusflow",
    "openbmb/UltraRM-13b": "meta+openbmb",
    "HuggingFaceH4/zephyr-7b-beta": "huggingface+mistral",
    "lmsys/vicuna-13b-v1.5": "lmsys+meta",
    "lmsys/vicuna-7b-v1.3": "lmsys+meta",
    "alpaca-13b": "meta+stanford",                   # as MT-Bench names it
    "Skywork/Skywork-Reward-Gemma-2-27B": "google+skywork",
    "Skywork/Skywork-Reward-Llama-3.1-8B-v0.2": "meta+skywork",
    "Skywork/Skywork-o1-Open-Llama-3.1-8B": "meta+skywork",
    "Skywork/Skywork-Reward-V2-Qwen3-8B": "alibaba+skywork",
    "Ray2333/GRM-Gemma-2B-rewardmodel-ft": "google",
    "internlm/internlm2-20b-reward": "shanghai-ai-lab",
    # EleutherAI and GPT4All
    "EleutherAI/gpt-j-6b": "eleutherai",
    "EleutherAI/pythia-12b": "eleutherai",
    "nomic-ai/gpt4all-j": "eleutherai+nomic",
    "nomic-ai/gpt4all-13b-snoozy": None,             # a LLaMA the name does not say
    # others
    "01-ai/Yi-1.5-34B-Chat": "01-ai",
    "tiiuae/falcon-40b-instruct": "tii",
    "Nexusflow/Athene-V2-Chat": None,                # a Qwen2.5 the name does not say
    "upstage/SOLAR-10.7B-Instruct-v1.0": None,
}


def test_the_table_holds_at_least_82_real_ids():
    assert len(REAL_IDS) >= 82


@pytest.mark.parametrize(("model", "family"), list(REAL_IDS.items()))
def test_family_of_a_real_id(model, family):
    assert family_of(model) == family


def _decision(a: str | None, b: str | None) -> str:
    s = shared(a, b)
    return "undecidable" if s is None else "disjoint" if not s else "shared"


def test_every_disjointness_decision_the_families_imply():
    wrong = [(a, b) for a, b in combinations(REAL_IDS, 2)
             if _decision(family_of(a), family_of(b)) != _decision(REAL_IDS[a], REAL_IDS[b])]
    assert wrong == []
    # the decisions the vendor sets imply, on the cases the hub organisation used to decide
    assert _decision(family_of("microsoft/Orca-2-13b"), family_of("meta-llama/Llama-2-13b-chat-hf")) == "shared"
    assert _decision(family_of("microsoft/MAI-DS-R1"), family_of("deepseek-ai/DeepSeek-V3")) == "shared"
    assert _decision(family_of("nvidia/AceMath-72B-RM"), family_of("Qwen/Qwen2.5-72B-Instruct")) == "shared"
    assert _decision(family_of("nomic-ai/gpt4all-j"), family_of("gpt-4o")) == "disjoint"
    assert _decision(family_of("microsoft/rho-math-7b-v0.1"), family_of("gpt-4o")) == "undecidable"
    assert vendors(family_of("Skywork/Skywork-o1-Open-Llama-3.1-8B")) == {"meta", "skywork"}
