"""Adapters for agent frameworks: LangGraph, Pydantic AI and the OpenAI Agents SDK.

Each module needs its framework's extra and is imported by its path:
`user_questions.integrations.langgraph` (`langgraph`), `user_questions.integrations.pydantic_ai`
(`pydantic-ai`), `user_questions.integrations.openai_agents` (`openai-agents`). All of them ask
through an `Asker` from `user_questions.connect()`.
"""
