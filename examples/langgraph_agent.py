"""A LangGraph agent with gligabao as its memory, through langchain-mcp-adapters.

    python examples/langgraph_agent.py --url http://127.0.0.1:7878/mcp --user alice

The graph is the standard one: a model node, LangGraph's own ToolNode with
its default error handling, and a loop between them until the model answers.
The model is scripted (no key needed): it remembers a fact, makes two bad
calls (a missing argument, a dataset that does not exist), reads the errors
they come back with and goes on, then recalls the fact and answers from it.
For a real model, put e.g. ``ChatAnthropic(model=...)`` in place of
``ScriptedChatModel`` and drop the script."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage, HumanMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from scripted import Answer, Script, ToolCall, main, remember_then_recall
from scripted.langchain_model import ScriptedChatModel


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def script(user_id: str) -> Script:
    remember, recall, answer = remember_then_recall(user_id)
    bad_calls: list[ToolCall | Answer] = [
        ToolCall("query", {"user_id": user_id}),  # no "query": the model forgot it
        ToolCall("query", {"user_id": user_id, "query": "Where?", "dataset": "no-such-dataset"}),
    ]
    return Script([remember, *bad_calls, recall, answer])


async def run(url: str, user_id: str, the_script: Script) -> str:
    client = MultiServerMCPClient({"gligabao": {"transport": "streamable_http", "url": url}})
    tools = await client.get_tools()
    model = ScriptedChatModel(script=the_script).bind_tools(tools)

    async def call_model(state: State) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(State)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    agent = graph.compile()
    out = await agent.ainvoke(
        {
            "messages": [
                HumanMessage("Alice works at Acme. Remember that, then tell me where she works.")
            ]
        }
    )
    return str(out["messages"][-1].content)


if __name__ == "__main__":
    main(run, script)
