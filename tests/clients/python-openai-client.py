# The Python `openai` SDK against a Palai hub: run by python-openai.test.ts in
# its own virtual environment. Prints one JSON object of what each call saw.
import json
import os

import openai
from openai import OpenAI

client = OpenAI(api_key=os.environ["PALAI_API_KEY"], base_url=os.environ["PALAI_BASE_URL"], max_retries=0)
echo, weather = os.environ["ECHO_AGENT"], os.environ["WEATHER_AGENT"]
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

chat = client.chat.completions.create(model=echo, messages=[{"role": "user", "content": "hello chat"}])
seen["chat"] = chat.choices[0].message.content

try:
    client.responses.create(model="no-such-agent", input="x")
except openai.NotFoundError as error:
    seen["error"] = {"status": error.status_code, "message": str(error)}

print(json.dumps(seen))
