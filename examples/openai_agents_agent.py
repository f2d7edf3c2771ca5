"""An OpenAI Agents SDK agent with gligabao as its memory, through the SDK's
MCP client (streamable HTTP).

    python examples/openai_agents_agent.py --url http://127.0.0.1:7878/mcp --user alice

The model is scripted (no key needed): it remembers a fact with the
`remember` tool, asks `query` about it, and answers from what memory said.
For a real model, drop ``model=`` (the SDK's default OpenAI model, with
OPENAI_API_KEY) and the ``set_tracing_disabled`` line if traces may be sent."""

from __future__ import annotations

from agents import Agent, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp

from scripted import Script, main
from scripted.openai_model import ScriptedModel


async def run(url: str, user_id: str, script: Script) -> str:
    set_tracing_disabled(True)  # no key: nothing to send traces to
    # A remember makes LLM calls: wait longer than the SDK's default 5 s.
    memory_server = MCPServerStreamableHttp(
        {"url": url, "timeout": 120},
        name="gligabao",
        cache_tools_list=True,
        client_session_timeout_seconds=120,
    )
    async with memory_server as memory:
        agent = Agent(
            name="assistant",
            instructions=f"You have a long-term memory; the user's id is {user_id}.",
            model=ScriptedModel(script),
            mcp_servers=[memory],
        )
        result = await Runner.run(
            agent, "Alice works at Acme. Remember that, then tell me where she works."
        )
    return str(result.final_output)


if __name__ == "__main__":
    main(run)
