"""An AWS Strands Agents agent with gligabao as its memory, through the
SDK's own MCP client.

    python examples/strands_agent.py --url http://127.0.0.1:7878/mcp --user alice

The model is scripted (no key needed): it remembers a fact with the
`remember` tool, asks `query` about it, and answers from what memory said.
For a real model, give ``Agent`` e.g. ``BedrockModel(model_id=...)``."""

from __future__ import annotations

from strands import Agent
from strands.tools.mcp import MCPClient

from scripted import Script, main
from scripted.strands_model import ScriptedModel


async def run(url: str, user_id: str, script: Script) -> str:
    with MCPClient(url=url) as memory:
        agent = Agent(
            model=ScriptedModel(script),
            tools=memory.list_tools_sync(),
            system_prompt=f"You have a long-term memory; the user's id is {user_id}.",
            callback_handler=None,
        )
        result = await agent.invoke_async(
            "Alice works at Acme. Remember that, then tell me where she works."
        )
    return str(result).strip()


if __name__ == "__main__":
    main(run)
