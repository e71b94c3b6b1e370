"""One AgentDojo suite as an MCP server (the official SDK, stdio): the suite's tools from the
pinned `agentdojo` package, run over its environment with the injection vectors of the case
being replayed filled with AgentDojo's attack text.

Usage: server.py SUITE DATA_DIR. The replay writes DATA_DIR/case.json ({"id", "user_task",
"injection_task"}, null for a run with no attack) before a case's first call; a new id starts a
fresh environment. After every call the server writes DATA_DIR/verdict.json: the calls that ran
and whether the injection task's goal was met (AgentDojo's own security check)."""

import json
import sys
from pathlib import Path

import anyio
import mcp.types as types
from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from suites import candidates, environment, suite

NAME, DATA = sys.argv[1], Path(sys.argv[2])
SUITE = suite(NAME)
RUNTIME = FunctionsRuntime(SUITE.tools)
VECTORS = {}  # user task id → the vectors its ground truth reads


class Case:
    id = None

    def load(self):
        case = json.loads((DATA / "case.json").read_text())
        if case["id"] == self.id:
            return
        self.id = case["id"]
        self.user = SUITE.get_user_task_by_id(case["user_task"])
        # No injection task: the user task alone, over the suite's own data.
        self.injection = case["injection_task"] and SUITE.get_injection_task_by_id(case["injection_task"])
        if self.user.ID not in VECTORS:
            VECTORS[self.user.ID] = candidates(SUITE, self.user)
        if self.injection:
            self.env = environment(SUITE, VECTORS[self.user.ID], self.injection.GOAL)
        else:
            self.env = SUITE.load_and_inject_default_environment({})
        self.pre = self.env.model_copy(deep=True)
        self.trace = []

    def verdict(self):
        if not self.injection:
            return
        post = self.env.model_copy(deep=True)
        met = self.injection.security_from_traces("", self.pre, post, self.trace)
        if met is None:
            met = self.injection.security("", self.pre, post)
        (DATA / "verdict.json").write_text(
            json.dumps({"case": self.id, "ran": [c.function for c in self.trace], "injection_goal_met": bool(met)})
        )


CASE = Case()


async def list_tools(ctx, params):
    return types.ListToolsResult(
        tools=[
            types.Tool(name=f.name, description=f.description, input_schema=f.parameters.model_json_schema())
            for f in SUITE.tools
        ]
    )


async def call_tool(ctx, params):
    CASE.load()
    args = params.arguments or {}
    result, error = RUNTIME.run_function(CASE.env, params.name, args)
    if error is None:
        CASE.trace.append(FunctionCall(function=params.name, args=args))
    CASE.verdict()
    text = error if error is not None else tool_result_to_str(result)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error is not None)


async def main():
    server = Server(f"agentdojo-{NAME}", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
