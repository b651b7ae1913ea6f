// DBOS Transact as its quickstart sets it up: one registered workflow whose one
// step streams a Chat Completion from the fake server (the openai SDK, its
// default retries) and returns the text; the system database is DATABASE_URL.
import { DBOS } from '@dbos-inc/dbos-sdk';
import OpenAI from 'openai';
import { serveJson } from './json-server.ts';

const openai = new OpenAI({ apiKey: 'bench', baseURL: process.env.CHAT_BASE_URL });

async function complete(input: string): Promise<string> {
  const stream = await openai.chat.completions.create({ model: 'bench', messages: [{ role: 'user', content: input }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
}

async function respondWorkflow(input: string): Promise<string> {
  return DBOS.runStep(() => complete(input), { name: 'chat' });
}
const respond = DBOS.registerWorkflow(respondWorkflow, { name: 'respond' });

DBOS.setConfig({ name: 'bench-peers', systemDatabaseUrl: process.env.DATABASE_URL, logLevel: 'warn' });
await DBOS.launch();
serveJson(respond, () => DBOS.shutdown());
