"""The Python peer's algorithms as its design (shared/seeds/002) describes them,
written here from that description: an independent oracle for remstore's Go
output. Where the peer's converter emits non-object tool-call arguments (which
pydantic-ai then rejects), remstore deliberately differs; tests account for it."""
import hashlib
import json
import re

from pydantic_ai.messages import (ModelRequest, ModelResponse, SystemPromptPart, TextPart,
                                  ToolCallPart, ToolReturnPart, UserPromptPart)


class MessageCompressor:
    def __init__(self, truncate_length: int = 200):
        self.truncate_length = truncate_length
        self.min_length_for_compression = truncate_length * 2

    def compress_message(self, message: dict, entity_key=None) -> dict:
        compressed = message.copy()
        content = compressed.get("content") or ""
        if len(content) <= self.min_length_for_compression or message.get("role") == "system":
            return compressed
        n = self.truncate_length
        start, end = content[:n], content[-n:]
        if entity_key:
            compressed["content"] = (f"{start}\n\n... [Message truncated - REM LOOKUP {entity_key} "
                                     f"to recover full content] ...\n\n{end}")
        else:
            compressed["content"] = (f"{start}\n\n... [Message truncated - {len(content) - 2 * n} "
                                     f"characters omitted] ...\n\n{end}")
        compressed["_compressed"] = True
        compressed["_original_length"] = len(content)
        if entity_key:
            compressed["_entity_key"] = entity_key
        return compressed


def truncate_key(key: str, max_length: int = 255) -> str:
    if len(key) <= max_length:
        return key
    return key[: max_length - 9] + "-" + hashlib.md5(key.encode()).hexdigest()[:8]


def compress_history(session_id: str, history: list, t: int) -> list:
    c = MessageCompressor(t)
    out = []
    for i, m in enumerate(history):
        if m.get("role") == "assistant":
            out.append(c.compress_message(m, truncate_key(f"session-{session_id}-msg-{i}")))
        else:
            out.append(dict(m))
    return out


def _sanitize(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


def _tool_parts(msg: dict, j: int):
    name = _sanitize(msg.get("tool_name") or "unknown_tool")
    call_id = msg.get("tool_call_id") or f"call_{j}"
    content = msg.get("content") or "{}"
    args = msg.get("tool_arguments")
    if args is None:
        try:
            args = json.loads(content)
        except (ValueError, TypeError):
            args = {}
    try:
        result = json.loads(content)
    except (ValueError, TypeError):
        result = {"raw": content}
    return (ToolCallPart(tool_name=name, args=args, tool_call_id=call_id),
            ToolReturnPart(tool_name=name, content=result, tool_call_id=call_id))


def session_to_pydantic_messages(history: list, system_prompt=None) -> list:
    role = lambda m: {"function": "tool", "model": "assistant"}.get(m.get("role"), m.get("role"))
    out = []
    if system_prompt:
        out.append(ModelRequest(parts=[SystemPromptPart(content=system_prompt)]))
    i = 0
    while i < len(history):
        m = history[i]
        r = role(m)
        content = m.get("content") or ""
        if r == "user":
            out.append(ModelRequest(parts=[UserPromptPart(content=content)]))
        elif r == "assistant":
            calls, returns = [], []
            j = i + 1
            while j < len(history) and role(history[j]) == "tool":
                c, rt = _tool_parts(history[j], j)
                calls.append(c)
                returns.append(rt)
                j += 1
            parts = calls + ([TextPart(content=content)] if content else [])
            if parts:
                out.append(ModelResponse(parts=parts, model_name="recovered"))
            if returns:
                out.append(ModelRequest(parts=returns))
            i = j
            continue
        elif r == "tool":
            c, rt = _tool_parts(m, i)
            out.append(ModelResponse(parts=[c], model_name="recovered"))
            out.append(ModelRequest(parts=[rt]))
        i += 1
    return out


def audit_session_history(session_id, agent_name, prompt, raw_session_history, pydantic_messages_count, audit_dir):
    """The peer's DEBUG_AUDIT_SESSION dump: read the file, append, rewrite."""
    import pathlib
    from datetime import datetime, timezone

    import yaml

    audit_file = pathlib.Path(audit_dir) / f"{session_id}.yaml"
    data = {"session_id": session_id, "invocations": []}
    if audit_file.exists():
        existing = yaml.safe_load(audit_file.read_text())
        if existing:
            data = existing
    data["invocations"].append({
        "timestamp": datetime.now(timezone.utc).isoformat(),
        "agent_name": agent_name,
        "prompt": prompt,
        "raw_history_count": len(raw_session_history),
        "pydantic_messages_count": pydantic_messages_count,
        "raw_session_history": raw_session_history,
    })
    audit_file.write_text(yaml.dump(data, default_flow_style=False, allow_unicode=True))
