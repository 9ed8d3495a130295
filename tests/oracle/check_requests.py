"""The request oracle: checks provider requests against the official SDKs' own request types
(PyPI `openai` and `anthropic`, pinned in scripts/install-interop; Responses, Chat Completions
and Messages), strictly, and Responses
bodies also against OpenAI's own OpenAPI schema for them (`CreateResponse`, extracted into
tests/oracle/openai-create-response.schema.json with its source and version, validated with
the pinned `jsonschema`), plus the rules the providers document that neither can express.
Nothing here was written from our client's point of view: the types are the SDKs', the
schema is OpenAI's, the rules are the providers' (each with its source in docs/decisions.md,
"The request oracle").

The OpenAPI schema's unions are `oneOf` lists with `discriminator: {propertyName: type}` and
no mapping; they are read as discriminated unions: the members whose `type` allows the
item's `type` are the candidates, and the item is valid when one of them accepts it (a plain
`oneOf` would refuse a user message, which both `EasyInputMessage` and `InputMessage`
accept). An item whose `type` no member allows is refused as such.

Strict means unknown keys are errors: every TypedDict of `openai.types` and
`anthropic.types` is given `extra="forbid"` before the request types are built, values are
validated with `strict=True`, and the lazy iterators pydantic returns for `Iterable[...]`
fields are walked so that their elements are validated too.

Two documented exceptions are applied, counted and reported (never silently):
- `id-less-items`: under `store: false`, Responses reasoning items and assistant output
  messages are sent back without the `id` the SDK types mark as required (the API keeps no
  items, so an id is looked up and refused with 404; Codex sends them the same way). The
  oracle requires the id to be absent there and validates the item with a stand-in id.
- `messages-temperature`: Messages `temperature` (a number from 0 to 1) is still accepted by
  the models before Claude Opus 4.7, though `anthropic` 2.14 dropped it from its types; the
  oracle checks it as a number in range and validates the rest of the body without it.
- `chat-echoed-reasoning`, `chat-echoed-extra-content`: on Chat Completions, an assistant
  message goes back with the fields its provider added to it and requires back (DeepSeek's
  `reasoning_content`, which its thinking mode refuses a tool-call turn without; vLLM's and
  OpenRouter's `reasoning`, `reasoning_details`; Gemini 3's thought signature in
  `extra_content`, on the message or a call, which its API requires back on the calls). The
  SDK types have none of them. Each is allowed only with the exact value the mock sent before
  the request (the request's `extras_sent`), then validated away; any other is a violation.
  (A mock playing DeepSeek in thinking mode also records an empty `reasoning_content` as
  sent: DeepSeek asks for the field on every assistant message of a tool loop, empty where
  the reply did not think.)

Usage:
  check_requests.py --serve     read one JSON line per batch on stdin:
                                {"requests": [{"wire", "headers", "body", "extras_sent"}, ...]}
                                and answer each with one line:
                                {"violations": [...], "allowances": {...}, "checked": N}
  check_requests.py FILE...     check JSON-lines files of {"wire", "headers", "body"};
                                exit 1 on any violation
"""
import base64
import binascii
import collections.abc
import importlib
import json
import pkgutil
import re
import sys
import typing

import jsonschema
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from typing_extensions import Annotated, NotRequired, Required, is_typeddict

import anthropic._constants
import anthropic.types
import openai.types

TYPED_DICTS = set()


def is_response_model(tp):
    """A pydantic model class, or an (annotated) union of them: the SDKs' response types."""
    if typing.get_origin(tp) is Annotated:
        return is_response_model(typing.get_args(tp)[0])
    if typing.get_origin(tp) is typing.Union:
        return all(is_response_model(a) for a in typing.get_args(tp))
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def eager(tp):
    """`tp` with every `Iterable[X]` made `List[X]`, at any depth, and response models left
    out of unions. pydantic validates an `Iterable` lazily (elements only when the result is
    iterated), and iterating those results can panic inside pydantic-core for recursive
    types; a list is validated whole."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is None or not args:
        return tp
    if origin is collections.abc.Iterable:
        return typing.List[eager(args[0])]
    if origin is typing.Union:
        # The SDKs let callers pass response objects back (`ContentBlock` among the param
        # types); those models accept any extra key, and a JSON request is not one of them.
        members = [a for a in args if not is_response_model(a)]
        return typing.Union[tuple(eager(a) for a in members or args)]
    if origin is Annotated:
        return Annotated[(eager(args[0]), *tp.__metadata__)]
    if origin in (Required, NotRequired, typing.Required, typing.NotRequired):
        return origin[eager(args[0])]
    if origin is list:
        return typing.List[eager(args[0])]
    if origin is dict:
        return typing.Dict[eager(args[0]), eager(args[1])]
    return tp


def forbid_extras(package):
    """Every TypedDict of `package` refuses unknown keys, and its iterables are lists."""
    classes = []
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        try:
            module = importlib.import_module(info.name)
        except Exception:
            continue
        for obj in vars(module).values():
            if is_typeddict(obj) and getattr(obj, "__module__", "").startswith(package.__name__):
                classes.append(obj)
    for cls in set(classes):
        own = cls.__dict__.get("__annotations__", {})
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except NameError:
            # A few types name classes imported only for type checkers (client extension
            # hooks); no request type reaches them.
            hints = None
        if hints is not None:
            cls.__annotations__ = {name: eager(hints[name]) for name in own}
        cls.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
        TYPED_DICTS.add(cls.__name__)


forbid_extras(openai.types)
forbid_extras(anthropic.types)

from anthropic.types import message_create_params  # noqa: E402
from openai.types.chat import completion_create_params  # noqa: E402
from openai.types.responses import response_create_params  # noqa: E402

ADAPTERS = {
    ("responses", True): TypeAdapter(response_create_params.ResponseCreateParamsStreaming),
    ("responses", False): TypeAdapter(response_create_params.ResponseCreateParamsNonStreaming),
    ("chat", True): TypeAdapter(completion_create_params.CompletionCreateParamsStreaming),
    ("chat", False): TypeAdapter(completion_create_params.CompletionCreateParamsNonStreaming),
    ("messages", True): TypeAdapter(message_create_params.MessageCreateParamsStreaming),
    ("messages", False): TypeAdapter(message_create_params.MessageCreateParamsNonStreaming),
}

# ----- OpenAI's OpenAPI schema for Responses bodies -----

SCHEMA_PATH = __file__.rsplit("/", 1)[0] + "/openai-create-response.schema.json"
with open(SCHEMA_PATH) as f:
    CREATE_RESPONSE = json.load(f)
PLAIN_ONE_OF = Draft202012Validator.VALIDATORS["oneOf"]


def deref(schema, depth=0):
    """The schema a local `$ref` points to (the document's `$defs`)."""
    while isinstance(schema, dict) and "$ref" in schema and depth < 50:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = CREATE_RESPONSE["$defs"].get(name, {})
        depth += 1
    return schema if isinstance(schema, dict) else {}


def tag_of(schema, tag, depth=0):
    """The schema of property `tag` in `schema` or its `allOf` members, and whether it is
    required there."""
    schema = deref(schema)
    prop = (schema.get("properties") or {}).get(tag)
    required = tag in (schema.get("required") or [])
    if depth < 20:
        for member in schema.get("allOf") or []:
            p, r = tag_of(member, tag, depth + 1)
            prop = prop if prop is not None else p
            required = required or r
    return prop, required


def allows(prop, value, depth=0):
    prop = deref(prop)
    if "const" in prop:
        return prop["const"] == value
    if "enum" in prop:
        return value in prop["enum"]
    for key in ("anyOf", "oneOf"):
        if key in prop and depth < 20:
            return any(allows(p, value, depth + 1) for p in prop[key])
    return True


def admits(branch, tag, value, depth=0):
    """Whether a union member may be the one an instance whose `tag` is `value` (None:
    absent) belongs to."""
    branch = deref(branch)
    if depth < 20:
        for key in ("oneOf", "anyOf"):
            if key in branch:
                return any(admits(b, tag, value, depth + 1) for b in branch[key])
    prop, required = tag_of(branch, tag)
    if value is None:
        return not required
    return prop is None or allows(prop, value)


def discriminated_one_of(validator, one_of, instance, schema):
    tag = (schema.get("discriminator") or {}).get("propertyName")
    if tag is None or not isinstance(instance, dict):
        yield from PLAIN_ONE_OF(validator, one_of, instance, schema)
        return
    value = instance.get(tag)
    candidates = [(i, b) for i, b in enumerate(one_of) if admits(b, tag, value)]
    if not candidates:
        yield jsonschema.ValidationError(f"`{tag}` {value!r} names no member of the union")
        return
    tried = []
    for i, branch in candidates:
        errors = list(validator.descend(instance, branch, schema_path=i))
        if not errors:
            return
        tried.append(errors)
    # The member that came closest: errors of its own fields before a union of its that
    # matched nothing, then the fewest.
    yield from min(tried, key=lambda errors: (
        any(e.validator in ("oneOf", "anyOf") for e in errors), len(errors)))


OPENAPI_VALIDATOR = jsonschema.validators.extend(
    Draft202012Validator, {"oneOf": discriminated_one_of}
)(CREATE_RESPONSE)


def check_openapi(check, body):
    """Responses: OpenAI's OpenAPI `CreateResponse` schema (see the module's doc)."""
    errors = sorted(OPENAPI_VALIDATOR.iter_errors(body), key=lambda e: list(e.absolute_path))
    for e in errors[:6]:
        # Of the union members tried, the error that says most.
        e = jsonschema.exceptions.best_match([e])
        where = ".".join(str(k) for k in e.absolute_path) or "(the body)"
        message = e.message if len(e.message) <= 300 else e.message[:300] + "…"
        check.fail(f"OpenAI's OpenAPI CreateResponse schema refuses it: {where}: {message}")


TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# The version the Messages API is documented with, and the one this SDK release sends.
ANTHROPIC_VERSIONS = {"2023-06-01", anthropic._constants.ANTHROPIC_API_VERSION}
# Anthropic: 413 `request_too_large` above 32 MB (docs.claude.com/en/api/errors).
MESSAGES_BODY_BYTES = 32 * 1000 * 1000
# OpenAI: `function_call_output.output` is at most 10,485,760 characters (the OpenAPI spec).
RESPONSES_OUTPUT_CHARS = 10_485_760
# OpenAI: "Invalid 'prompt_cache_key': string too long. Expected a string with maximum
# length 64" (vybestack/llxprt-code#2135, theopenco/llmgateway#3110).
PROMPT_CACHE_KEY_CHARS = 64
# Anthropic: "A maximum of 4 blocks with cache_control may be provided. Found 5."
CACHE_BREAKPOINTS = 4
# OpenAI Chat Completions: "Invalid 'messages[0].content': string too long. Expected a string
# with maximum length 10485760" (the figure of current reports; older ones say 1048576).
CHAT_CONTENT_CHARS = 10_485_760
# OpenAI: "Invalid 'tools': array too long. Expected an array with maximum length 128".
CHAT_TOOLS = 128
# The fields a Chat Completions provider adds to an assistant message (or a call) and needs
# back, by the allowance that lets them through (see the module's doc).
CHAT_EXTRAS = {
    "reasoning_content": "chat-echoed-reasoning",
    "reasoning": "chat-echoed-reasoning",
    "reasoning_details": "chat-echoed-reasoning",
    "extra_content": "chat-echoed-extra-content",
}
IMAGE_MAGIC = {
    "image/png": [b"\x89PNG\r\n\x1a\n"],
    "image/jpeg": [b"\xff\xd8\xff"],
    "image/gif": [b"GIF87a", b"GIF89a"],
    "image/webp": [b"RIFF"],
}


def materialise(value):
    """Walks a validated value, so that lazily validated iterables raise their errors."""
    if isinstance(value, dict):
        return {k: materialise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [materialise(v) for v in value]
    if type(value).__name__ == "ValidatorIterator":
        return [materialise(v) for v in value]
    return value


def is_branch_tag(key):
    """Whether a component of a pydantic error location names a union member."""
    if isinstance(key, int):
        return False
    return key in TYPED_DICTS or "[" in key or key in {
        "str", "int", "float", "bool", "none", "dict", "list", "literal", "json-or-python",
    } or key.startswith("function-")


def prune(errors, depth=0):
    """Of every union pydantic tried, keeps only the errors of the member that came closest:
    the fewest errors, a member whose `type` literal did not even match counting as furthest."""
    deeper = [e for e in errors if len(e["loc"]) > depth]
    here = [e for e in errors if len(e["loc"]) <= depth]
    groups = {}
    for e in deeper:
        groups.setdefault(e["loc"][depth], []).append(e)
    if groups and all(is_branch_tag(k) for k in groups):
        def score(item):
            kept = prune(item[1], depth + 1)
            # The value is not of this member's kind at all (a string against a list), or
            # its `type` names another member.
            mismatch = any(
                len(e["loc"]) == depth + 1
                or (e["type"] == "literal_error" and len(e["loc"]) == depth + 2 and e["loc"][-1] == "type")
                for e in item[1]
            )
            return (mismatch, len(kept))
        best = min(groups.items(), key=score)
        return here + prune(best[1], depth + 1)
    kept = list(here)
    for group in groups.values():
        kept.extend(prune(group, depth + 1))
    return kept


def describe(errors, limit=6):
    lines = []
    for e in prune(errors)[:limit]:
        where = ".".join(str(k) for k in e["loc"] if not (isinstance(k, str) and is_branch_tag(k) and k not in TYPED_DICTS))
        lines.append(f"{where}: {e['msg']}")
    return "; ".join(lines)


class Check:
    def __init__(self, index, wire):
        self.index = index
        self.wire = wire
        self.violations = []
        self.allowances = {}

    def fail(self, message):
        self.violations.append(f"request {self.index} ({self.wire}): {message}")

    def allow(self, name):
        self.allowances[name] = self.allowances.get(name, 0) + 1


def check_schema_top_level(check, where, schema, forbidden):
    if not isinstance(schema, dict):
        check.fail(f"{where}: the input schema is not an object")
        return
    if schema.get("type") != "object":
        check.fail(f"{where}: the input schema's top-level `type` is not \"object\"")
    for keyword in forbidden:
        if keyword in schema:
            check.fail(f"{where}: the input schema has a top-level `{keyword}`, which the API refuses")


def check_tool_names(check, names):
    seen = set()
    for name in names:
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            check.fail(f"tool name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$")
        if name in seen:
            check.fail(f"tool name {name!r} is used twice")
        seen.add(name)


def decoded_prefix(data, size=16):
    try:
        return base64.b64decode(data[: ((size + 2) // 3) * 4], validate=True)
    except (binascii.Error, ValueError):
        return None


def check_image(check, where, media_type, data):
    if not isinstance(data, str) or not data:
        check.fail(f"{where}: the image has no base64 data")
        return
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        check.fail(f"{where}: the image data is not valid base64")
        return
    head = decoded_prefix(data) or b""
    magics = IMAGE_MAGIC.get(media_type)
    if magics is None:
        check.fail(f"{where}: images of type {media_type!r} are not accepted")
    elif not any(head.startswith(m) for m in magics) or (
        media_type == "image/webp" and head[8:12] != b"WEBP"
    ):
        check.fail(f"{where}: the image bytes are not {media_type} (\"Image does not match the provided media type\")")


def header(headers, name):
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


# ----- Responses -----


def responses_rules(check, headers, body):
    # OpenAI takes a bearer token; a definition's `auth: x-api-key` (SPEC §3.1) sends the key
    # as `x-api-key` instead, for gateways that want it so.
    auth = header(headers, "authorization") or ""
    bearer = auth.startswith("Bearer ") and auth[len("Bearer "):].strip()
    if not (bearer or header(headers, "x-api-key")):
        check.fail("no `Authorization: Bearer <key>` header (nor the `x-api-key` a definition's `auth` may choose)")
    if not (header(headers, "content-type") or "").startswith("application/json"):
        check.fail("the content type is not application/json")
    tools = body.get("tools") or []
    check_tool_names(check, [t.get("name") for t in tools if isinstance(t, dict) and t.get("type") == "function"])
    for i, tool in enumerate(tools):
        if isinstance(tool, dict) and tool.get("type") == "function":
            check_schema_top_level(check, f"tools.{i} ({tool.get('name')})", tool.get("parameters"),
                                   ["oneOf", "anyOf", "allOf", "enum", "not"])
    max_output = body.get("max_output_tokens")
    if isinstance(max_output, int) and max_output < 16:
        check.fail("max_output_tokens is below the minimum of 16")
    key = body.get("prompt_cache_key")
    if isinstance(key, str) and len(key) > PROMPT_CACHE_KEY_CHARS:
        check.fail(f"prompt_cache_key is {len(key)} characters, more than {PROMPT_CACHE_KEY_CHARS}")
    items = body.get("input")
    if not isinstance(items, list):
        return
    stateless = body.get("store") is False
    calls, outputs = set(), set()
    for item in items:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            outputs.add(item.get("call_id"))
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if stateless and "id" in item and item.get("id") is not None:
            check.fail(f"input.{i}: an item with an `id` under store: false (\"Item with id … not found. Items are not persisted when `store` is set to false\", 404)")
        if kind == "function_call":
            call_id = item.get("call_id")
            if call_id not in outputs:
                check.fail(f"input.{i}: \"No tool output found for function call {call_id}.\"")
            calls.add(call_id)
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in calls:
                check.fail(f"input.{i}: \"No tool call found for function call output with call_id {call_id}.\"")
            output = item.get("output")
            if isinstance(output, str) and len(output) > RESPONSES_OUTPUT_CHARS:
                check.fail(f"input.{i}: the output is longer than {RESPONSES_OUTPUT_CHARS} characters")
            if isinstance(output, list):
                for j, part in enumerate(output):
                    if isinstance(part, dict) and part.get("type") == "input_image":
                        url = part.get("image_url") or ""
                        match = re.match(r"^data:([^;,]+);base64,(.*)$", url, re.S)
                        if not match:
                            check.fail(f"input.{i}.output.{j}: the image is not a base64 data URL")
                        else:
                            check_image(check, f"input.{i}.output.{j}", match.group(1), match.group(2))
                    if isinstance(part, dict) and part.get("type") == "input_text" and not part.get("text"):
                        check.fail(f"input.{i}.output.{j}: an empty input_text part")
        elif kind == "reasoning":
            if i + 1 >= len(items):
                check.fail(f"input.{i}: \"Item of type 'reasoning' was provided without its required following item.\"")


def responses_allowances(check, body):
    """The id-less items (see the module's doc): a stand-in id for validation only."""
    if body.get("store") is not False or not isinstance(body.get("input"), list):
        return body
    items = []
    for item in body["input"]:
        needs_id = isinstance(item, dict) and "id" not in item and (
            item.get("type") == "reasoning"
            or (item.get("type") == "message" and item.get("role") == "assistant"
                and any(isinstance(p, dict) and p.get("type") in ("output_text", "refusal")
                        for p in item.get("content") or []))
        )
        if needs_id:
            item = dict(item, id="oracle_stand_in")
            check.allow("id-less-items")
        items.append(item)
    return dict(body, input=items)


# ----- Chat Completions -----


def chat_rules(check, headers, body):
    auth = header(headers, "authorization") or ""
    bearer = auth.startswith("Bearer ") and auth[len("Bearer "):].strip()
    if not (bearer or header(headers, "x-api-key")):
        check.fail("no `Authorization: Bearer <key>` header (nor the `x-api-key` a definition's `auth` may choose)")
    if not (header(headers, "content-type") or "").startswith("application/json"):
        check.fail("the content type is not application/json")
    tools = body.get("tools") or []
    if isinstance(tools, list) and len(tools) > CHAT_TOOLS:
        check.fail(f"\"Invalid 'tools': array too long. Expected an array with maximum length {CHAT_TOOLS}\"")
    functions = [t.get("function") for t in tools if isinstance(t, dict) and t.get("type") == "function"]
    check_tool_names(check, [f.get("name") for f in functions if isinstance(f, dict)])
    for i, function in enumerate(functions):
        if isinstance(function, dict):
            check_schema_top_level(check, f"tools.{i} ({function.get('name')})", function.get("parameters"),
                                   ["oneOf", "anyOf", "allOf", "enum", "not"])
    for field in ("max_completion_tokens", "max_tokens"):
        value = body.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 1:
            check.fail(f"{field} is below the minimum of 1")
    if "max_completion_tokens" in body and "max_tokens" in body:
        check.fail("both max_completion_tokens and max_tokens (one output limit, in one of its names)")
    if "stream_options" in body and body.get("stream") is not True:
        check.fail("\"The 'stream_options' parameter is only allowed when 'stream' is enabled.\"")
    key = body.get("prompt_cache_key")
    if isinstance(key, str) and len(key) > PROMPT_CACHE_KEY_CHARS:
        check.fail(f"prompt_cache_key is {len(key)} characters, more than {PROMPT_CACHE_KEY_CHARS}")
    messages = body.get("messages")
    if not isinstance(messages, list):
        return
    if not messages:
        check.fail("\"[] is too short - 'messages'\"")
    pending, answering = [], False
    for n, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role != "tool" and pending:
            check.fail(f"messages.{n}: \"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(map(str, pending))}\"")
            pending = []
        content = message.get("content")
        if isinstance(content, str) and len(content) > CHAT_CONTENT_CHARS:
            check.fail(f"messages.{n}.content is longer than {CHAT_CONTENT_CHARS} characters")
        if isinstance(content, list):
            for j, part in enumerate(content):
                if isinstance(part, dict) and part.get("type") == "image_url":
                    url = (part.get("image_url") or {}).get("url") or ""
                    match = re.match(r"^data:([^;,]+);base64,(.*)$", url, re.S)
                    if not match:
                        check.fail(f"messages.{n}.content.{j}: the image is not a base64 data URL")
                    else:
                        check_image(check, f"messages.{n}.content.{j}", match.group(1), match.group(2))
                if isinstance(part, dict) and part.get("type") == "text" and not part.get("text"):
                    check.fail(f"messages.{n}.content.{j}: an empty text part")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls and message.get("refusal") is None:
                # OpenAI: "Invalid value for 'content': expected a string, got null."; llama.cpp:
                # "Assistant message must contain either 'content' or 'tool_calls'!"
                check.fail(f"messages.{n}: an assistant message with neither content nor tool_calls")
            for k, call in enumerate(calls):
                arguments = ((call or {}).get("function") or {}).get("arguments")
                try:
                    parsed = json.loads(arguments) if isinstance(arguments, str) else None
                except ValueError:
                    parsed = None
                if not isinstance(parsed, dict):
                    # llama.cpp renders the history through the model's template, which parses
                    # them ("Failed to parse tool call arguments as JSON").
                    check.fail(f"messages.{n}.tool_calls.{k}: the arguments are not a JSON object")
            pending = [c.get("id") for c in calls if isinstance(c, dict)]
            answering = bool(pending)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not answering or call_id not in pending:
                check.fail(f"messages.{n}: \"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.\"")
            pending = [p for p in pending if p != call_id]
        else:
            answering = False
    if pending:
        check.fail(f"messages: \"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(map(str, pending))}\"")


def chat_allowances(check, body, extras_sent):
    """The provider extras echoed back (see the module's doc): each allowed only with a value
    the mock sent, then left out for validation."""
    sent = []
    for e in extras_sent or []:
        try:
            sent.append((e["name"], json.loads(e["value"])))
        except (KeyError, TypeError, ValueError):
            check.fail(f"the mock's record of what it sent is unreadable: {e!r}")
    messages = body.get("messages")
    if not isinstance(messages, list):
        return body

    def strip(where, fields):
        kept = {}
        for key, value in fields.items():
            allowance = CHAT_EXTRAS.get(key)
            if allowance is None:
                kept[key] = value
                continue
            if any(name == key and v == value for name, v in sent):
                check.allow(allowance)
            else:
                check.fail(f"{where}: `{key}` that the provider did not send (only fields a provider added may go back)")
        return kept

    out = []
    for n, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            message = strip(f"messages.{n}", message)
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                message = dict(message, tool_calls=[
                    strip(f"messages.{n}.tool_calls.{k}", c) if isinstance(c, dict) else c
                    for k, c in enumerate(calls)])
        out.append(message)
    return dict(body, messages=out)


# ----- Messages -----


def blocks_of(message):
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def messages_rules(check, headers, body, raw_size):
    key = header(headers, "x-api-key")
    auth = header(headers, "authorization") or ""
    if not (key or (auth.startswith("Bearer ") and auth[len("Bearer "):].strip())):
        check.fail("no `x-api-key` or `Authorization: Bearer` header")
    version = header(headers, "anthropic-version")
    if version not in ANTHROPIC_VERSIONS:
        check.fail(f"anthropic-version is {version!r}, not one of {sorted(ANTHROPIC_VERSIONS)}")
    if not (header(headers, "content-type") or "").startswith("application/json"):
        check.fail("the content type is not application/json")
    if raw_size > MESSAGES_BODY_BYTES:
        check.fail(f"the body is {raw_size} bytes, more than the API's 32 MB (413 request_too_large)")
    tools = body.get("tools") or []
    custom = [t for t in tools if isinstance(t, dict) and t.get("type") in (None, "custom")]
    check_tool_names(check, [t.get("name") for t in custom])
    for i, tool in enumerate(custom):
        check_schema_top_level(check, f"tools.{i} ({tool.get('name')})", tool.get("input_schema"),
                               ["oneOf", "anyOf", "allOf"])
    breakpoints = 1 if body.get("cache_control") else 0
    breakpoints += sum(1 for t in tools if isinstance(t, dict) and t.get("cache_control"))
    system = body.get("system")
    if isinstance(system, list):
        breakpoints += sum(1 for b in system if isinstance(b, dict) and b.get("cache_control"))
        for j, block in enumerate(system):
            if isinstance(block, dict) and block.get("type") == "text" and not block.get("text"):
                check.fail(f"system.{j}: \"text content blocks must be non-empty\"")
    thinking = body.get("thinking") or {}
    thinks = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    temperature = body.get("temperature")
    if thinks and temperature is not None and temperature != 1:
        check.fail("`temperature` other than 1 with thinking (\"temperature may only be set to 1 when thinking is enabled\")")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024 or budget >= (body.get("max_tokens") or 0):
            check.fail("thinking.budget_tokens must be at least 1024 and less than max_tokens")
    choice = body.get("tool_choice") or {}
    if thinks and isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        check.fail("forced tool use with thinking (only `auto` and `none` are allowed)")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return
    if not isinstance(messages[0], dict) or messages[0].get("role") != "user":
        check.fail("messages.0: the first message must use the \"user\" role")
    for n, message in enumerate(messages):
        blocks = blocks_of(message)
        role = message.get("role") if isinstance(message, dict) else None
        for m, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            if block.get("cache_control"):
                breakpoints += 1
            if block.get("type") == "text" and not block.get("text"):
                check.fail(f"messages.{n}.content.{m}: \"text content blocks must be non-empty\"")
            elif block.get("type") == "text" and isinstance(block.get("text"), str) and not block["text"].strip():
                check.fail(f"messages.{n}.content.{m}: \"text content blocks must contain non-whitespace text\"")
            if block.get("type") == "tool_result" and block.get("is_error") is True and block.get("content") in (None, "", []):
                check.fail(f"messages.{n}.content.{m}.tool_result: \"content cannot be empty if `is_error` is true\"")
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                for k, inner in enumerate(block["content"]):
                    if not isinstance(inner, dict):
                        continue
                    if inner.get("cache_control"):
                        breakpoints += 1
                    if inner.get("type") == "text" and not inner.get("text"):
                        check.fail(f"messages.{n}.content.{m}.content.{k}: \"text content blocks must be non-empty\"")
                    if inner.get("type") == "image" and isinstance(inner.get("source"), dict) and inner["source"].get("type") == "base64":
                        check_image(check, f"messages.{n}.content.{m}.content.{k}",
                                    inner["source"].get("media_type"), inner["source"].get("data"))
            if block.get("type") == "image" and isinstance(block.get("source"), dict) and block["source"].get("type") == "base64":
                check_image(check, f"messages.{n}.content.{m}", block["source"].get("media_type"), block["source"].get("data"))
        uses = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        if role == "assistant" and uses:
            following = messages[n + 1] if n + 1 < len(messages) else None
            answered = []
            if isinstance(following, dict) and following.get("role") == "user":
                answered = [b.get("tool_use_id") for b in blocks_of(following)
                            if isinstance(b, dict) and b.get("type") == "tool_result"]
            missing = [u for u in uses if u not in answered]
            if missing:
                check.fail(f"messages.{n + 1}: \"`tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(map(str, missing))}\"")
        if role == "user":
            previous = messages[n - 1] if n > 0 else None
            previous_uses = set()
            if isinstance(previous, dict) and previous.get("role") == "assistant":
                previous_uses = {b.get("id") for b in blocks_of(previous) if isinstance(b, dict) and b.get("type") == "tool_use"}
            seen_other = False
            for m, block in enumerate(blocks):
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_result":
                    if seen_other:
                        check.fail(f"messages.{n}.content.{m}: a tool_result after other content (tool_result blocks must come first in a user message)")
                    if block.get("tool_use_id") not in previous_uses:
                        check.fail(f"messages.{n}.content.{m}: \"unexpected `tool_use_id` found in `tool_result` blocks: {block.get('tool_use_id')}\"")
                else:
                    seen_other = True
    # With budget thinking, the assistant turn the last user message's tool results answer
    # must begin with its thinking ("When `thinking` is enabled, a final `assistant` message
    # must start with a thinking block", n8n-io/n8n#22550).
    if isinstance(thinking, dict) and thinking.get("type") == "enabled" and len(messages) >= 2:
        last, turn = messages[-1], messages[-2]
        answers_tools = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks_of(last))
        first = blocks_of(turn)[0] if blocks_of(turn) else None
        if answers_tools and isinstance(turn, dict) and turn.get("role") == "assistant" and not (
                isinstance(first, dict) and first.get("type") in ("thinking", "redacted_thinking")):
            check.fail(f"messages.{len(messages) - 2}: with thinking enabled, the assistant turn answered by tool results must start with a thinking block")
    if breakpoints > CACHE_BREAKPOINTS:
        check.fail(f"\"A maximum of {CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}.\"")


def messages_allowances(check, body):
    """Messages `temperature` (see the module's doc): checked here, then left out."""
    if "temperature" not in body:
        return body
    t = body["temperature"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 1:
        check.fail(f"temperature {t!r} is not a number from 0 to 1")
    check.allow("messages-temperature")
    return {k: v for k, v in body.items() if k != "temperature"}


def check_one(index, request):
    wire = request.get("wire")
    body = request.get("body")
    headers = request.get("headers") or {}
    check = Check(index, wire)
    if wire not in ("responses", "messages", "chat"):
        check.fail(f"unknown wire {wire!r}")
        return check
    if not isinstance(body, dict):
        check.fail("the body is not a JSON object")
        return check
    raw_size = len(json.dumps(body, ensure_ascii=False).encode())
    if wire == "responses":
        responses_rules(check, headers, body)
        typed = responses_allowances(check, body)
        check_openapi(check, typed)
    elif wire == "chat":
        chat_rules(check, headers, body)
        typed = chat_allowances(check, body, request.get("extras_sent"))
    else:
        messages_rules(check, headers, body, raw_size)
        typed = messages_allowances(check, body)
    adapter = ADAPTERS[(wire, body.get("stream") is True)]
    try:
        materialise(adapter.validate_python(typed, strict=True))
    except ValidationError as e:
        check.fail("the SDK's request type refuses it: " + describe(e.errors()))
    return check


def check_batch(requests):
    violations, allowances = [], {}
    for i, request in enumerate(requests):
        check = check_one(i, request)
        violations.extend(check.violations)
        for name, n in check.allowances.items():
            allowances[name] = allowances.get(name, 0) + n
    return {"violations": violations, "allowances": allowances, "checked": len(requests)}


def serve():
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = check_batch(json.loads(line)["requests"])
        except Exception as e:  # a bug here must fail the test that asked, not hang it
            answer = {"violations": [f"the oracle failed: {type(e).__name__}: {e}"], "allowances": {}, "checked": 0}
        print(json.dumps(answer), flush=True)


def main(paths):
    requests = []
    for path in paths:
        with open(path) as f:
            requests.extend(json.loads(line) for line in f if line.strip())
    answer = check_batch(requests)
    for v in answer["violations"]:
        print(v)
    print(f"{answer['checked']} requests, {len(answer['violations'])} violations, allowances {answer['allowances']}")
    return 1 if answer["violations"] else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        sys.exit(main(sys.argv[1:]))
