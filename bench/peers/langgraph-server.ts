// LangGraph.js as its persistence guide sets it up: a one-node StateGraph over
// MessagesAnnotation, compiled with PostgresSaver on DATABASE_URL, a new thread
// per request. The node streams from ChatOpenAI and gathers the chunks (the
// chat-model streaming guide's concat): the fake server only streams, and
// ChatOpenAI's invoke with streaming on counts tokens with tiktoken, whose
// ranks it fetches from the network, which this bench does not have.
import { randomUUID } from 'node:crypto';
import type { AIMessageChunk } from '@langchain/core/messages';
import { concat } from '@langchain/core/utils/stream';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { ChatOpenAI } from '@langchain/openai';
import { serveJson } from './json-server.ts';

const model = new ChatOpenAI({ model: 'bench', apiKey: 'bench', configuration: { baseURL: process.env.CHAT_BASE_URL } });
const checkpointer = PostgresSaver.fromConnString(process.env.DATABASE_URL!);
await checkpointer.setup();

async function callModel(state: typeof MessagesAnnotation.State) {
  let gathered: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(state.messages)) gathered = gathered === undefined ? chunk : concat(gathered, chunk);
  return { messages: [gathered!] };
}

const graph = new StateGraph(MessagesAnnotation).addNode('model', callModel).addEdge(START, 'model').addEdge('model', END).compile({ checkpointer });

serveJson(
  async (input) => {
    const state = await graph.invoke({ messages: [{ role: 'user', content: input }] }, { configurable: { thread_id: randomUUID() } });
    return String(state.messages.at(-1)!.content);
  },
  () => checkpointer.end(),
);
