"""The gate: a policy of bars on card quantities judged PASS, FAIL or BLIND (``evaluate``), read from
YAML (``policy``), on a card's quantities (``quantities``), rendered for CI (``render``)."""

from judgeaudit.gate.evaluate import EXIT_CODES, OUTCOMES, GateResult, evaluate
from judgeaudit.gate.policy import Bar, Policy, load_policy, parse_expression

evaluate_policy = evaluate

__all__ = ["evaluate_policy", "EXIT_CODES", "OUTCOMES", "Bar", "GateResult", "Policy", "evaluate", "load_policy", "parse_expression"]
