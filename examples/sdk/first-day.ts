// A first day with @palai/sdk: create an agent, stream a run that calls a
// client tool, answer the tool and the approval it then waits for, and list
// the wakes of an objective. Against any hub (the README's `npm start` serves
// one with the fake model):
//
//   PALAI_URL=http://localhost:8080 PALAI_API_KEY=palai_sk_… npx tsx examples/sdk/first-day.ts
import { createPalai, PalaiApiError, type ResponseStreamEvent } from '@palai/sdk';

const palai = createPalai({ baseUrl: process.env.PALAI_URL ?? 'http://localhost:8080', apiKey: process.env.PALAI_API_KEY ?? '' });

/** Prints the words as they stream; answers the id of the response and the event it settled at. */
async function show(events: AsyncGenerator<ResponseStreamEvent>): Promise<{ id: string; settledAt: ResponseStreamEvent }> {
  let id = '';
  let last: ResponseStreamEvent | undefined;
  for await (const event of events) {
    if ('response' in event) id = event.response.id;
    if (event.type === 'response.output_text.delta') process.stdout.write(event.delta);
    last = event;
  }
  process.stdout.write('\n');
  return { id, settledAt: last! };
}

async function main(): Promise<void> {
  // 1. An agent: the fake model asks for the weather (a tool this program runs), then to post it (a tool that needs approval).
  const agent = await palai.POST('/v1/agents', {
    body: {
      name: `forecaster-${Date.now().toString(36)}`,
      instructions: 'Find the weather, then post it.',
      tools: [
        { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
        { type: 'builtin', name: 'echo' },
      ],
      approval: { tools: ['echo'] },
      model: {
        provider: 'fake',
        script: [
          { tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] },
          { tool_calls: [{ name: 'echo', arguments: { text: 'Sunny in Oslo' } }] },
          { text: 'Posted: it is sunny in Oslo.' },
        ],
      },
    },
  });
  console.log(`agent ${agent.name} (${agent.id}), revision ${agent.revision}`);

  // 2. A streamed run; it settles waiting for the client tool.
  const first = await show(palai.responses.stream({ model: agent.name, input: 'What is the weather in Oslo? Post it.' }));
  const waiting = await palai.GET('/v1/responses/{response_id}', { params: { path: { response_id: first.id } } });
  const [call] = waiting.required_action?.calls ?? [];
  console.log(`${first.id} is ${waiting.palai_status}: ${call.name}(${call.arguments})`);

  // 3. The tool's output; the run goes on and settles again, waiting for a person to approve the post.
  await palai.POST('/v1/responses/{response_id}/tool_outputs', {
    params: { path: { response_id: first.id } },
    body: { outputs: [{ call_id: call.call_id, output: JSON.stringify({ sky: 'sunny', celsius: 18 }) }] },
  });
  const approval = await palai.responses.wait(first.id, { timeoutMs: 60_000 });
  const [post] = approval.required_action?.calls ?? [];
  console.log(`${first.id} is ${approval.palai_status}: ${post.name}(${post.arguments})`);

  // 4. Approved; the run finishes.
  await palai.POST('/v1/responses/{response_id}/approvals', {
    params: { path: { response_id: first.id } },
    body: { call_id: post.call_id, decision: 'approve', reason: 'Looks right.' },
  });
  const done = await palai.responses.wait(first.id, { timeoutMs: 60_000 });
  console.log(`${first.id} is ${done.palai_status}: ${done.output_text}`);

  // 5. An objective of the agent: a policy approved by its hash, one wake now, and the wakes listed.
  const objective = await palai.POST('/v1/objectives', { body: { agent: agent.id, description: 'Post the Oslo weather each morning.' } });
  const policy = await palai.POST('/v1/objectives/{objective}/policies', {
    params: { path: { objective: objective.id } },
    body: { document: { objective_scope: 'the Oslo weather post', consequence_classes: ['observe', 'external_effect'], max_concurrency: 1 } },
  });
  await palai.POST('/v1/objectives/{objective}/policies/{version}/approve', {
    params: { path: { objective: objective.id, version: policy.version } },
    body: { hash: policy.hash },
  });
  await palai.POST('/v1/objectives/{objective}/wake', { params: { path: { objective: objective.id } }, body: { reason: 'first day' } });
  const wakes = await palai.GET('/v1/objectives/{objective}/wakes', { params: { path: { objective: objective.id }, query: { limit: 10 } } });
  for (const wake of wakes.data) console.log(`wake of ${objective.id}: ${wake.outcome}${wake.response_id ? ` as ${wake.response_id}` : ''}`);
}

main().catch((error: unknown) => {
  // A problem the hub answered: its slug and detail say what to fix.
  if (error instanceof PalaiApiError) console.error(`${error.status} ${error.slug}: ${error.detail ?? error.title}`);
  else console.error(error);
  process.exit(1);
});
