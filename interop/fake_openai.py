"""A stand-in for the OpenAI API on 127.0.0.1, so the docs' snippets run as
written (Agent("openai:gpt-4o"), the Agents SDK's default model) with no
network: OPENAI_BASE_URL points here. It answers Chat Completions and
Responses requests with a text naming how many messages it was sent."""
from jsonserver import JSONServer


class FakeOpenAI(JSONServer):
    def __init__(self):
        super().__init__(self._answer)
        self.url += "/v1"

    def _answer(self, path, body):
        n = len(self.requests)
        if path.endswith("/chat/completions"):
            msgs = body["messages"]
            text = f"Answer {n} ({len(msgs)} messages sent)."
            out = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000,
                   "model": body["model"], "choices": [{"index": 0, "finish_reason": "stop",
                                                         "message": {"role": "assistant", "content": text}}],
                   "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}
        elif path.endswith("/responses"):
            items = body["input"] if isinstance(body["input"], list) else [body["input"]]
            text = f"Answer {n} ({len(items)} items sent)."
            out = {"id": f"resp_{n}", "object": "response", "created_at": 1700000000, "status": "completed",
                   "model": body["model"], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                   "output": [{"type": "message", "id": f"msg_{n}", "status": "completed", "role": "assistant",
                               "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                   "usage": {"input_tokens": 5, "output_tokens": 5, "total_tokens": 10,
                             "input_tokens_details": {"cached_tokens": 0},
                             "output_tokens_details": {"reasoning_tokens": 0}}}
        else:
            return None
        return out
