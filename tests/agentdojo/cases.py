"""Writes every security case of the suites as JSON (stdout): per suite its user tasks (prompt,
ground-truth calls, the injection vectors they read) and injection tasks (goal, ground-truth
calls). Cowork's replay (tests/support/agentdojo.rs) reads it; computed once by setup."""

import json
import sys

from suites import SUITES, VERSION, candidates, suite


def calls(task, env):
    out = []
    for call in task.ground_truth(env):
        # The real values (an injection task's `placeholder_args` only name where they came from).
        out.append({"function": call.function, "args": dict(call.args)})
    return out


def main():
    dump = {"version": VERSION, "suites": {}}
    for name in SUITES:
        s = suite(name)
        env = s.load_and_inject_default_environment({})
        users = []
        for task_id, task in s.user_tasks.items():
            users.append(
                {
                    "id": task_id,
                    "prompt": task.PROMPT,
                    "calls": calls(task, s.load_and_inject_default_environment({})),
                    "vectors": candidates(s, task),
                }
            )
        injections = [
            {"id": task_id, "goal": task.GOAL, "calls": calls(task, env)}
            for task_id, task in s.injection_tasks.items()
        ]
        dump["suites"][name] = {
            "tools": [t.name for t in s.tools],
            "user_tasks": users,
            "injection_tasks": injections,
        }
    json.dump(dump, sys.stdout, default=str)


if __name__ == "__main__":
    main()
