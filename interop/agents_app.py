"""A deterministic OpenAI Agents SDK app for the tests: a fake model (no
network) that calls a tool, answers, and writes a long answer on request."""
from agents import Agent, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

set_tracing_disabled(True)  # no network: nothing to export traces to

LONG = "".join(f"Line {i}: the answer goes on, déjà vu 日本. " for i in range(30))
PROMPTS = ["What is 2 + 3?", "And 10 + 20?", "Write a long answer", "Thanks, that is all"]


class FakeModel(Model):
    """Answers from what it is sent: a tool call for a sum, a text otherwise.
    Records every input it receives in seen."""

    def __init__(self):
        self.seen, self.calls = [], 0

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id=None, conversation_id=None, prompt=None, **kw):
        self.calls += 1
        self.seen.append(input if isinstance(input, str) else [dict(i) for i in input])
        last = input[-1] if isinstance(input, list) else {"role": "user", "content": input}
        n = self.calls
        if last.get("type") == "function_call_output":
            return self._text(f"The sum is {last['output']}.")
        text = last.get("content") if isinstance(last.get("content"), str) else ""
        if "+" in text:
            a, b = (int(x) for x in text.rstrip("?").split("is")[-1].replace("And", "").split("+"))
            call = ResponseFunctionToolCall(id=f"fc_{n}", call_id=f"call_{n}", type="function_call", name="add",
                                            arguments=f'{{"a": {a}, "b": {b}}}', status="completed")
            return ModelResponse(output=[call], usage=self._usage(), response_id=None)
        if "long" in text:
            return self._text(LONG)
        return self._text(f"You're welcome ({len(input)} items of history).")

    def _usage(self):
        return Usage(requests=1, input_tokens=3, output_tokens=4, total_tokens=7)

    def _text(self, text):
        msg = ResponseOutputMessage(id=f"msg_{self.calls}", type="message", role="assistant", status="completed",
                                    content=[ResponseOutputText(type="output_text", text=text, annotations=[])])
        return ModelResponse(output=[msg], usage=self._usage(), response_id=None)

    def stream_response(self, *a, **k):
        raise NotImplementedError


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def make_agent(model):
    return Agent(name="calc", instructions="You add numbers.", model=model, tools=[add])
