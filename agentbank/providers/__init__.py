"""Outside services behind small interfaces: chat models and embedders."""

from agentbank.providers.chat import ChatModel, ChatResult, Message, Usage
from agentbank.providers.embeddings import Embedder
from agentbank.providers.factory import build_chat_model, build_embedder

__all__ = ["ChatModel", "ChatResult", "Embedder", "Message", "Usage", "build_chat_model", "build_embedder"]
