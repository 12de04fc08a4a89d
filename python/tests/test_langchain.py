"""KithChatMessageHistory and KithRetriever against the real
langchain-core (the pinned version), embedded and over HTTP."""

from __future__ import annotations

import asyncio

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from kith.langchain import KithChatMessageHistory, KithRetriever


def test_chat_history_round_trips_messages(mem, fresh):
    history = KithChatMessageHistory(mem, fresh)
    assert history.messages == []
    sent = [
        SystemMessage(content="You are a helpful assistant."),
        HumanMessage(content="I moved to Lisbon in September.", name="Maya"),
        AIMessage(content="", tool_calls=[{"name": "weather", "args": {"city": "Lisbon"}, "id": "t1"}]),
        ToolMessage(content="Sunny, 24°C", tool_call_id="t1"),
        AIMessage(content="Lovely! It is sunny there."),
    ]
    history.add_messages(sent)
    got = history.messages
    assert [type(m) for m in got] == [type(m) for m in sent]
    assert [m.content for m in got] == [m.content for m in sent]
    assert got[1].name == "Maya"
    assert got[2].tool_calls[0]["name"] == "weather" and got[3].tool_call_id == "t1"

    # They are kith memories: retrieval finds the user's turn with its speaker.
    top = mem.retrieve("Who moved to Lisbon?", session=fresh)[0]
    assert (top.text, top.speaker, top.role) == ("I moved to Lisbon in September.", "Maya", "user")

    history.clear()
    assert history.messages == []
    history.clear()  # clearing an empty history is fine


def facts(mem):
    return dict(map(tuple, mem.stats()["nodes_by_type"])).get("fact", 0)


def test_chat_history_can_ingest(mem, fresh):
    before = facts(mem)
    history = KithChatMessageHistory(mem, fresh, ingest=True)
    history.add_user_message("My sister Ana lives in Berlin.")
    asyncio.run(history.aadd_messages([AIMessage(content="Nice!")]))
    assert [m.content for m in asyncio.run(history.aget_messages())] == [
        "My sister Ana lives in Berlin.",
        "Nice!",
    ]
    # Ingested: extraction wrote the claim.
    assert facts(mem) > before


def test_retriever_returns_documents_with_provenance(mem, fresh):
    mem.store("We hiked the Sintra trail on Sunday.", speaker="Sam", session=fresh)
    mem.store("The printer is out of toner.", speaker="Ana", session=fresh)
    retriever = KithRetriever(memory=mem, session=fresh, limit=5)
    docs = retriever.invoke("Sintra hike")
    assert docs[0].page_content == "We hiked the Sintra trail on Sunday."
    assert docs[0].metadata["speaker"] == "Sam" and docs[0].metadata["score"] > 0
    assert docs[0].metadata["session"] == fresh and docs[0].metadata["rank"] == 1
    adocs = asyncio.run(retriever.ainvoke("Sintra hike"))
    assert [d.page_content for d in adocs] == [d.page_content for d in docs]
