"""Reads one streamed reply from a provider mock with the official SDK's streaming client:
`openai` `responses.stream` or `chat.completions.stream`, or `anthropic` `messages.stream`,
exactly as an application would, and prints what the SDK assembled as one JSON line.

Usage: sdk_stream.py responses|chat|messages BASE_URL KEY

Prints {"events": [event types in order], "final": the final response or message,
null fields left out}. A Responses stream that ends with `response.incomplete` has no final
response in the SDK's sense; its `response` is printed instead, and likewise the completion
of a Chat Completions stream cut off by the output limit.
"""
import json
import sys

wire, base_url, key = sys.argv[1:4]

if wire == "responses":
    from openai import OpenAI

    client = OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=60)
    events, final = [], None
    with client.responses.stream(
        model="mock-model",
        input=[{"role": "user", "content": "Hello."}],
        store=False,
        include=["reasoning.encrypted_content"],
    ) as stream:
        for event in stream:
            events.append(event.type)
            if event.type == "response.incomplete":
                final = event.response
        if final is None:
            final = stream.get_final_response()
elif wire == "chat":
    import openai
    from openai import OpenAI

    client = OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=60)
    events = []
    with client.chat.completions.stream(
        model="mock-model",
        messages=[{"role": "user", "content": "Hello."}],
        stream_options={"include_usage": True},
    ) as stream:
        for event in stream:
            events.append(event.type)
        try:
            final = stream.get_final_completion()
        except openai.LengthFinishReasonError as cut_off:
            # The helper will not parse a reply the limit cut off; what it read is here.
            final = cut_off.completion
else:
    from anthropic import Anthropic

    client = Anthropic(api_key=key, base_url=base_url, max_retries=0, timeout=60)
    events = []
    with client.messages.stream(
        model="mock-model",
        max_tokens=1000,
        messages=[{"role": "user", "content": "Hello."}],
    ) as stream:
        for event in stream:
            events.append(event.type)
        final = stream.get_final_message()

print(json.dumps({"events": events, "final": final.model_dump(mode="json", exclude_none=True)}))
