"""A pydantic-ai agent recovers cut text itself: remstore mcp over stdio."""
import json
import os

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import remstore_bin, run


def stdio_toolset(args, env):
    """`remstore mcp` as an agent toolset: MCPServerStdio in pydantic-ai 1.x,
    MCPToolset over fastmcp's stdio transport in 2.x (MCPServerStdio was removed)."""
    try:
        from pydantic_ai.mcp import MCPServerStdio
    except ImportError:
        from fastmcp.client.transports import StdioTransport
        from pydantic_ai.mcp import MCPToolset
        return MCPToolset(StdioTransport(command=remstore_bin(), args=args, env=env))
    return MCPServerStdio(remstore_bin(), args=args, env=env)


def test_agent_calls_rem_lookup(tmp_path):
    env = {"REMSTORE_DB": str(tmp_path / "mcp.db"), "REMSTORE_USER_ID": "alice"}
    full = "The full plan: " + "step after step, " * 40 + "done."
    run(["store", "--session-id", "trip"], env=env,
        stdin=json.dumps([{"role": "user", "content": "plan"}, {"role": "assistant", "content": full}]).encode())
    history = json.loads(run(["load", "--session-id", "trip"], env=env).stdout)
    (cut,) = [m for m in history if m.get("_compressed")]
    assert "REM LOOKUP " + cut["_entity_key"] in cut["content"]

    seen_tools = []

    def model(messages, info: AgentInfo) -> ModelResponse:
        seen_tools.extend(t.name for t in info.function_tools)
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(content=str(returns[0].content))])
        return ModelResponse(parts=[ToolCallPart(tool_name="rem_lookup", args={"key": "REM LOOKUP " + cut["_entity_key"]})])

    server = stdio_toolset(["mcp"], {**os.environ, **env})
    agent = Agent(FunctionModel(model), toolsets=[server])
    result = agent.run_sync("recover the cut answer")
    assert "rem_lookup" in seen_tools and "session_history" in seen_tools
    assert result.output == full


def test_other_tenant_gets_nothing(tmp_path):
    env = {"REMSTORE_DB": str(tmp_path / "mcp.db"), "REMSTORE_USER_ID": "alice"}
    run(["store", "--session-id", "t"], env=env, stdin=json.dumps([{"role": "assistant", "content": "x" * 500}]).encode())
    key = [m for m in json.loads(run(["load", "--session-id", "t"], env=env).stdout) if m.get("_compressed")][0]["_entity_key"]

    def model(messages, info: AgentInfo) -> ModelResponse:
        # a tool error comes back as a retry prompt (1.x) or an error return (2.x)
        answers = [p for p in messages[-1].parts if isinstance(p, (ToolReturnPart, RetryPromptPart))]
        if answers:
            return ModelResponse(parts=[TextPart(content=str(answers[0].content))])
        return ModelResponse(parts=[ToolCallPart(tool_name="rem_lookup", args={"key": key})])

    server = stdio_toolset(["mcp", "--user-id", "bob"], {**os.environ, **env})
    out = Agent(FunctionModel(model), toolsets=[server]).run_sync("try").output
    assert "not found" in out and "x" * 50 not in out
