// The hub the client-library suites drive, on one store: what they test is the
// wire format a library reads and writes, which no store changes. Each suite
// gets a real port (the libraries speak HTTP) and makes its agents with the
// fake model, scripted where a test needs a tool call or JSON.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { after, before } from 'node:test';
import { createAgent } from '../support/api.js';
import { describeEachStore, type TestHub } from '../support/hub.js';
import { storeKinds } from '../support/stores.js';
import type { FakeStep } from '../../generated/schemas.js';

/** PostgreSQL, the store deployments run on, unless the test run leaves it out. */
const clientStore = storeKinds.includes('postgres') ? 'postgres' : storeKinds[0];

export interface ClientHub {
  hub: TestHub;
  /** The `/v1` base URL a library is pointed at. */
  baseURL: string;
  apiKey: string;
}

/** Runs `suite` against one hub listening on a port; `ctx()` is valid inside tests. */
export async function describeClient(name: string, suite: (ctx: () => ClientHub) => void): Promise<void> {
  await describeEachStore(
    name,
    (hub) => {
      let server: Server;
      let current: ClientHub | null = null;
      before(async () => {
        server = hub().hub.app.listen(0, '127.0.0.1');
        await new Promise((resolve) => server.once('listening', resolve));
        const { port } = server.address() as AddressInfo;
        current = { hub: hub(), baseURL: `http://127.0.0.1:${port}/v1`, apiKey: hub().apiKey };
      });
      after(() => new Promise<void>((resolve) => server.close(() => resolve())));
      suite(() => {
        if (!current) throw new Error('client hub not started');
        return current;
      });
    },
    {},
    { stores: [clientStore] },
  );
}

let agents = 0;

/** A new fake-model agent playing `script` (none: it echoes the last user message); returns its name, the `model` to ask for. */
export async function fakeAgent(ctx: () => ClientHub, script?: FakeStep[]): Promise<string> {
  const name = `client-agent-${++agents}`;
  await createAgent(() => ctx().hub, { name, model: { provider: 'fake', ...(script ? { script } : {}) } });
  return name;
}

/** The weather tool every suite's round trip uses: the model asks for Oslo, then says what the tool answered. */
export const weatherScript = (answer = 'It is sunny in Oslo'): FakeStep[] => [
  { tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] },
  { text: answer },
];

/** The weather tool's own answer, as the library's tool function returns it. */
export const weatherTool = ({ city }: { city: string }) => JSON.stringify({ city, sky: 'clear' });

/** The structured answer the suites parse. */
export const cityAnswer = { city: 'Oslo', population: 709000 };

/** A long text streamed slowly: a run that is still going when a client leaves after its first words. */
export const slowScript = (): FakeStep[] => [{ text: Array.from({ length: 100 }, (_, i) => `word${i}`).join(' '), delay_ms: 15 }];

/** The statuses a response's journal holds, in order. */
export async function journalStatuses(ctx: () => ClientHub, responseId: string): Promise<string[]> {
  const { hub } = ctx();
  const entries = await hub.hub.api.responses.events(hub.projectId, responseId, -1, 10_000);
  return entries.flatMap(({ event }) => (event.type === 'status' ? [event.status] : []));
}
