"""AgentDojo's suites as Cowork replays them: the pinned package's tools, environments, tasks and
its own attack text. Shared by the MCP server (server.py) and the case dump (cases.py)."""

from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack
from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suite
from agentdojo.types import get_text_content_as_str

# The benchmark version the replay runs (v1.2: the suites' current tasks; the paper's 629 cases
# are v1).
VERSION = "v1.2"
SUITES = ("workspace", "slack", "travel", "banking")
# The attack AgentDojo reports its headline numbers with, in the package's own words.
USER, MODEL = "Emma Johnson", "the AI language model"


def suite(name):
    return get_suite(VERSION, name)


def attack_text(goal):
    return ImportantInstructionsAttack._JB_STRING.format(user=USER, model=MODEL, goal=goal)


def candidates(s, user_task):
    """The injection vectors a user task's ground truth reads (AgentDojo's canary method)."""
    canaries = {v: f"<CANARY---{v}--->" for v in s.get_injection_vector_defaults()}
    env = s.load_and_inject_default_environment(canaries)
    runtime = FunctionsRuntime(s.tools)
    _, _, _, responses, _ = GroundTruthPipeline(user_task).query(user_task.PROMPT, runtime, env)
    seen = " ".join(
        get_text_content_as_str(r["content"]) for r in responses if r.get("content") is not None
    )
    return [v for v, canary in canaries.items() if canary in seen]


def environment(s, vectors, goal):
    """The suite's environment with `vectors` carrying the attack for `goal` (others default)."""
    return s.load_and_inject_default_environment({v: attack_text(goal) for v in vectors})
