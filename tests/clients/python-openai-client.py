# The Python `openai` SDK against a Palai hub: run by python-openai.test.ts in
# its own virtual environment. Prints one JSON object of what each call saw.
import json
import os

import openai
from openai import OpenAI
from pydantic import BaseModel

client = OpenAI(api_key=os.environ["PALAI_API_KEY"], base_url=os.environ["PALAI_BASE_URL"], max_retries=0)
echo, weather, city, turns = os.environ["ECHO_AGENT"], os.environ["WEATHER_AGENT"], os.environ["CITY_AGENT"], os.environ["TURNS_AGENT"]
seen = {"version": openai.__version__}

seen["text"] = client.responses.create(model=echo, input="hello from python").output_text

deltas = []
with client.responses.stream(model=echo, input="one two three") as stream:
    for event in stream:
        if event.type == "response.output_text.delta":
            deltas.append(event.delta)
    seen["stream"] = {"deltas": deltas, "final": stream.get_final_response().output_text}

tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
first = client.responses.create(model=weather, input="weather in Oslo?", tools=tools)
call = next(item for item in first.output if item.type == "function_call")
output = json.dumps({"city": json.loads(call.arguments)["city"], "sky": "clear"})
second = client.responses.create(
    model=weather,
    previous_response_id=first.id,
    input=[{"type": "function_call_output", "call_id": call.call_id, "output": output}],
)
seen["tool"] = {"name": call.name, "arguments": json.loads(call.arguments), "final": second.output_text}

class City(BaseModel):
    city: str
    population: int


parsed = client.responses.parse(model=city, input="the biggest city of Norway?", text_format=City).output_parsed
seen["structured"] = parsed.model_dump()

# The turns agent answers by its place in the conversation: a second turn, chained or resent, is its second answer.
turn = client.responses.create(model=turns, input="first turn")
follow = client.responses.create(model=turns, previous_response_id=turn.id, input="second turn")
history = [{"role": "user", "content": "first turn"}, {"role": "assistant", "content": turn.output_text}, {"role": "user", "content": "second turn"}]
resent = client.responses.create(model=turns, input=history)
seen["multi_turn"] = {"first": turn.output_text, "chained": follow.output_text, "resent": resent.output_text}

chat = client.chat.completions.create(model=echo, messages=[{"role": "user", "content": "hello chat"}])
seen["chat"] = chat.choices[0].message.content

try:
    client.responses.create(model="no-such-agent", input="x")
except openai.NotFoundError as error:
    seen["error"] = {"status": error.status_code, "message": str(error)}

print(json.dumps(seen))
