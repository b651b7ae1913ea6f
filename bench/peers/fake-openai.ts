// The one fake OpenAI server every system calls, in a process of its own so its
// CPU is neither the load's nor a system's: bench/chat-wire-server.ts streaming
// a 20-word answer as 20 one-word Chat Completions chunks. Prints its base URL.
import { startChatWire } from '../chat-wire-server.ts';

const wire = await startChatWire(Number(process.env.BENCH_PEERS_WORDS ?? 20));
process.stdout.write(`${wire.baseUrl}\n`);
process.once('SIGTERM', () => void wire.close().then(() => process.exit(0)));
