"""KithStore against the real LangGraph (the version pinned in
crates/kith-cli/tests/python/package-requirements.txt), embedded and over
HTTP."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.config import get_store
from langgraph.prebuilt import create_react_agent

import kith
from kith.langgraph import KithStore, namespace_scope, scope_namespace


def test_put_get_search_delete_over_namespaces(mem):
    store = KithStore(mem)
    user = f"u{uuid.uuid4().hex[:8]}"
    ns = ("memories", user)
    store.put(ns, "home", {"text": "Maya moved to Lisbon in September.", "topic": "places"})
    store.put(ns, "food", {"text": "Maya is vegetarian.", "topic": "food"})
    store.put(("profiles", user), "name", {"full": "Maya Okafor"})

    got = store.get(ns, "home")
    assert got.value == {"text": "Maya moved to Lisbon in September.", "topic": "places"}
    assert (got.key, got.namespace) == ("home", ns)

    # A new put is a new version: get and search see only it.
    store.put(ns, "home", {"text": "Maya moved to Porto last week.", "topic": "places"})
    assert store.get(ns, "home").value["text"] == "Maya moved to Porto last week."
    assert store.get(ns, "home").updated_at > store.get(ns, "home").created_at

    found = store.search(ns, query="Where did Maya move?")
    # Ranked, one answer per item (the Lisbon version no longer answers).
    assert [i.key for i in found] == ["home", "food"]
    assert found[0].value["text"] == "Maya moved to Porto last week." and found[0].score > 0
    assert [i.key for i in store.search(ns, query="Maya moved", limit=1)] == ["home"]
    assert [i.key for i in store.search(ns, filter={"topic": "food"})] == ["food"]
    assert {i.key for i in store.search(("memories",))} >= {"home", "food"}
    assert store.search(("profiles", user), query="Lisbon") == []

    spaces = store.list_namespaces(suffix=(user,))
    assert spaces == [("memories", user), ("profiles", user)]
    assert ("memories",) in store.list_namespaces(max_depth=1)

    store.delete(ns, "home")
    assert store.get(ns, "home") is None
    assert [i.key for i in store.search(ns, query="Where did Maya move?")] == ["food"]
    # Deleting is kith's forget: the text is gone from the log too.
    assert all("Porto" not in e.content for e in mem.events(scope=namespace_scope(ns)))
    store.delete(ns, "never-stored")  # a no-op, as in LangGraph's stores


def test_async_store_methods(mem):
    store = KithStore(mem)
    ns = ("async", uuid.uuid4().hex[:8])

    async def main():
        await store.aput(ns, "k", {"text": "tea with oat milk"})
        item = await store.aget(ns, "k")
        hits = await store.asearch(ns, query="oat milk")
        return item, hits

    item, hits = asyncio.run(main())
    assert item.value == {"text": "tea with oat milk"} and hits[0].key == "k"


def test_namespaces_round_trip_through_scopes():
    for ns in [("memories", "maya"), ("a b", "ü/@x", "日本"), ("x:y-z_1",)]:
        assert scope_namespace(namespace_scope(ns)) == ns
    assert scope_namespace("personal") is None


class ScriptedModel(GenericFakeChatModel):
    """A chat model that answers from a script (no LLM in tests) and
    accepts tools, as create_react_agent needs."""

    def bind_tools(self, tools, **kwargs):
        return self


@tool
def remember(fact: str) -> str:
    """Remember a fact about the user."""
    get_store().put(("memories", "maya"), "fact-1", {"text": fact})
    return "remembered"


@tool
def recall(question: str) -> str:
    """Recall what is known about the user."""
    items = get_store().search(("memories", "maya"), query=question)
    return "\n".join(i.value["text"] for i in items) or "nothing"


# create_react_agent is what the issue names; LangGraph 1.x points to
# langchain's create_agent instead, with the same store argument.
@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_create_react_agent_uses_kith_as_its_store(tmp_path):
    memory = kith.Memory(tmp_path / "agent.kith", owner="maya", embeddings="none")
    script = iter(
        [
            AIMessage(content="", tool_calls=[{"name": "remember", "args": {"fact": "Maya lives in Lisbon."}, "id": "c1"}]),
            AIMessage(content="Noted."),
            AIMessage(content="", tool_calls=[{"name": "recall", "args": {"question": "Where does Maya live?"}, "id": "c2"}]),
            AIMessage(content="In Lisbon."),
        ]
    )
    agent = create_react_agent(ScriptedModel(messages=script), [remember, recall], store=KithStore(memory))
    agent.invoke({"messages": [("user", "I live in Lisbon, remember that.")]})
    out = agent.invoke({"messages": [("user", "Where do I live?")]})
    tool_answer = [m for m in out["messages"] if m.type == "tool"][-1]
    assert tool_answer.content == "Maya lives in Lisbon."
    assert out["messages"][-1].content == "In Lisbon."
    # The fact is a kith memory of owner maya, found by kith's retrieval.
    assert memory.retrieve("Where does Maya live?")[0].text == "Maya lives in Lisbon."
