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


#: Model ids users write that no rule of the table was written for (Ollama library names, Hugging Face
#: ids, quantised copies, provider routes), each with its true family by the same convention: the
#: base model's vendor plus its trainer's where the table names that trainer; ``None`` where the name
#: does not establish the base (the comment gives the base it hides): such a model is refused until
#: the user gives ``family=``, never given its brand's family alone.
HELD_OUT: dict[str, str | None] = {
    # Ollama library names
    "deepseek-r1:1.5b": "alibaba+deepseek",
    "deepseek-r1:7b": "alibaba+deepseek",
    "deepseek-r1:14b": "alibaba+deepseek",
    "ollama/deepseek-r1:32b": "alibaba+deepseek",
    "deepseek-r1:8b": "alibaba+deepseek+meta",
    "ollama_chat/deepseek-r1:70b": "deepseek+meta",
    "deepseek-r1:671b": "deepseek",
    "deepseek-r1:8b-llama-distill-q4_K_M": "deepseek+meta",
    "llama3.1:8b": "meta",
    "llama3.2:3b": "meta",
    "qwen2.5:7b": "alibaba",
    "qwen3:30b-a3b": "alibaba",
    "gemma2:9b": "google",
    "gemma3:12b": "google",
    "mixtral:8x7b": "mistral",
    "phi3:mini": "microsoft",
    "phi4:14b": "microsoft",
    "codellama:13b": "meta",
    "deepseek-coder-v2:16b": "deepseek",
    "command-r:35b": "cohere",
    "granite3.1-dense:8b": "ibm",
    "olmo2:13b": "allenai",
    "yi:34b": "01-ai",
    "internlm2:7b": "shanghai-ai-lab",
    "tulu3:8b": "allenai+meta",
    "dolphin-llama3:8b": "meta",
    "dolphin-mixtral:8x7b": "mistral",
    "dolphin3:8b": None,                      # Dolphin 3.0: Llama 3.1 8B; the brand tunes many bases
    "nous-hermes2:34b": None,                 # Yi-34B (and 10.7b: SOLAR)
    "openhermes": None,                       # OpenHermes 2.5: Mistral 7B (OpenHermes 13B: Llama 2)
    "neural-chat:7b": None,                   # Intel neural-chat v3: Mistral 7B (v1: MPT)
    "openchat:7b": None,                      # OpenChat 3.5: Mistral 7B (3.6: Llama 3; v3.2: Llama 2)
    "nemotron:70b": "meta+nvidia",            # Llama-3.1-Nemotron-70B-Instruct
    "nemotron-mini:4b": "nvidia",
    "wizardlm2:7b": "microsoft+mistral",
    "qwq:32b": "alibaba",
    "falcon3:7b": "tii",
    "glm4:9b": "zhipu",
    "aya-expanse:8b": "cohere",
    "smollm2:1.7b": None,                     # Hugging Face's own: the table does not list it
    "exaone3.5:7.8b": None,                   # LG's own: the table does not list it
    # Hugging Face ids
    "NousResearch/Hermes-3-Llama-3.1-8B": "meta+nous",
    "teknium/OpenHermes-2.5-Mistral-7B": "mistral",
    "lmsys/vicuna-33b-v1.3": "lmsys+meta",
    "allenai/tulu-2-dpo-13b": "allenai+meta",
    "HuggingFaceH4/zephyr-7b-alpha": "huggingface+mistral",
    "HuggingFaceH4/mistral-7b-sft-beta": "huggingface+mistral",
    "Intel/neural-chat-7b-v3-1": None,        # Mistral 7B
    "openchat/openchat-3.5-0106": None,       # Mistral 7B
    "openchat/openchat-3.6-8b-20240522": None,  # Llama 3 8B
    "WizardLMTeam/WizardMath-7B-V1.1": None,  # Mistral 7B
    "WizardLMTeam/WizardCoder-Python-34B-V1.0": None,  # Code Llama 34B
    "NousResearch/Nous-Capybara-7B-V1.9": None,  # Mistral 7B
    "NousResearch/Nous-Capybara-34B": None,   # Yi-34B
    "cognitivecomputations/dolphin-2.9-llama3-8b": "meta",
    "cognitivecomputations/dolphin-2.6-mistral-7b": "mistral",
    "cognitivecomputations/Dolphin3.0-Llama3.1-8B": "meta",
    "NousResearch/Nous-Hermes-2-Yi-34B": "01-ai+nous",
    "Open-Orca/Mistral-7B-OpenOrca": "mistral",
    "allenai/OLMo-7B-Instruct": "allenai",
    "allenai/OLMo-2-0325-32B-Instruct": "allenai",
    "microsoft/Phi-3-medium-4k-instruct": "microsoft",
    "microsoft/Phi-4-reasoning": "microsoft",
    "google/gemma-2-27b-it": "google",
    "google/shieldgemma-9b": "google",
    "Qwen/Qwen2-72B-Instruct": "alibaba",
    "Qwen/Qwen2.5-Coder-32B-Instruct": "alibaba",
    "01-ai/Yi-34B-Chat": "01-ai",
    "internlm/internlm2_5-7b-chat": "shanghai-ai-lab",
    "ibm-granite/granite-3.0-8b-instruct": "ibm",
    "CohereForAI/c4ai-command-r-plus": "cohere",
    "CohereForAI/aya-expanse-32b": "cohere",
    "CohereForAI/aya-101": "cohere+google",   # mT5-XXL
    "tiiuae/Falcon3-10B-Instruct": "tii",
    "THUDM/glm-4-9b-chat": "zhipu",
    "mistralai/Mistral-Small-24B-Instruct-2501": "mistral",
    "mistralai/Magistral-Small-2506": "mistral",
    "meta-llama/Llama-Guard-3-8B": "meta",
    "upstage/SOLAR-10.7B-v1.0": None,         # Mistral 7B weights in a deeper Llama 2 layout
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": "deepseek+meta",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B": "alibaba+deepseek",
    "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B": "alibaba+deepseek",
    "nvidia/OpenReasoning-Nemotron-7B": None,  # Qwen2.5-7B
    "nvidia/AceReason-Nemotron-14B": None,    # DeepSeek-R1-Distill-Qwen-14B
    "nvidia/Llama-3_3-Nemotron-Super-49B-v1": "meta+nvidia",
    "nvidia/Nemotron-Mini-4B-Instruct": "nvidia",
    "nvidia/NVIDIA-Nemotron-Nano-9B-v2": "nvidia",
    "Skywork/Skywork-OR1-32B": None,          # DeepSeek-R1-Distill-Qwen-32B
    "Skywork/Skywork-13B-base": "skywork",
    "OpenGVLab/InternVL3-8B": None,           # Qwen2.5-7B
    "moonshotai/Kimi-Dev-72B": "alibaba+moonshot",  # Qwen2.5-72B
    "moonshotai/Kimi-K2-Instruct": "moonshot",
    "open-thoughts/OpenThinker-7B": None,     # Qwen2.5-7B
    "agentica-org/DeepScaleR-1.5B-Preview": None,  # DeepSeek-R1-Distill-Qwen-1.5B
    "simplescaling/s1-32B": None,             # Qwen2.5-32B
    "NovaSky-AI/Sky-T1-32B-Preview": None,    # Qwen2.5-32B
    "bespokelabs/Bespoke-Stratos-7B": None,   # Qwen2.5-7B
    "garage-bAInd/Platypus2-70B-instruct": None,  # Llama 2 70B
    "stabilityai/StableBeluga2": None,        # Llama 2 70B
    "Xwin-LM/Xwin-LM-70B-V0.1": None,         # Llama 2 70B
    "Nexusflow/Athene-70B": None,             # Llama 3 70B
    "openlm-research/open_llama_7b": "openlm",  # trained from scratch, not Meta's weights
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0": None,  # trained from scratch; the table does not list it
    # quantised copies and providers
    "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF": "meta",
    "TheBloke/Mistral-7B-Instruct-v0.2-GGUF": "mistral",
    "unsloth/DeepSeek-R1-Distill-Qwen-14B-GGUF": "alibaba+deepseek",
    "lmstudio-community/gemma-2-9b-it-GGUF": "google",
    "openrouter/nousresearch/hermes-3-llama-3.1-405b": "meta+nous",
    "together_ai/deepseek-ai/DeepSeek-R1-Distill-Llama-70B": "deepseek+meta",
    "groq/llama-3.3-70b-versatile": "meta",
    "groq/deepseek-r1-distill-llama-70b": "deepseek+meta",
    "fireworks_ai/accounts/fireworks/models/deepseek-r1": "deepseek",
    "openrouter/deepseek/deepseek-r1-distill-qwen-32b": "alibaba+deepseek",
}


def test_the_table_holds_at_least_82_real_ids():
    assert len(REAL_IDS) >= 82


@pytest.mark.parametrize(("model", "family"), list(REAL_IDS.items()))
def test_family_of_a_real_id(model, family):
    assert family_of(model) == family


def _decision(a: str | None, b: str | None) -> str:
    s = shared(a, b)
    return "undecidable" if s is None else "disjoint" if not s else "shared"


@pytest.mark.parametrize(("model", "family"), list(HELD_OUT.items()))
def test_family_of_a_held_out_id(model, family):
    assert family_of(model) == family


def test_no_held_out_pair_sharing_a_vendor_is_decided_disjoint():
    # every pair of the held-out ids (with the rule ids) decided as their true families decide it
    ids = {**REAL_IDS, **HELD_OUT}
    decided = {(a, b): (_decision(family_of(a), family_of(b)), _decision(ids[a], ids[b]))
               for a, b in combinations(ids, 2)}
    assert [p for p, (got, true) in decided.items() if got == "disjoint" and true != "disjoint"] == []
    assert [p for p, (got, true) in decided.items() if got != true] == []
    # the distills whose name carries the trainer's brand and not the base
    assert _decision(family_of("deepseek-r1:7b"), family_of("Qwen/Qwen2.5-7B-Instruct")) == "shared"
    assert _decision(family_of("ollama/deepseek-r1:70b"), family_of("meta-llama/Llama-3.3-70B-Instruct")) == "shared"
    assert _decision(family_of("deepseek-r1:8b"), family_of("qwen3:8b")) == "shared"
    assert _decision(family_of("nvidia/OpenReasoning-Nemotron-7B"), family_of("qwen2.5:7b")) == "undecidable"
    assert _decision(family_of("deepseek-r1:3b"), family_of("gpt-4o")) == "undecidable"  # no such distill


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
