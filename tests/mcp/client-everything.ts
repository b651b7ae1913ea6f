// @modelcontextprotocol/server-everything, the MCP project's own test server,
// started over Streamable HTTP on a free port (or named for stdio) for Palai's
// MCP client to call.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort, ROOT } from '../support/cli.js';

/** Its bin: `node <EVERYTHING> stdio | streamableHttp` (the port from PORT). */
export const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

export interface RunningEverything {
  /** Its Streamable HTTP endpoint. */
  url: string;
  close(): void;
}

export async function startEverything(): Promise<RunningEverything> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${err}`)), 30_000);
    child.stderr!.on('data', (chunk) => {
      err += chunk;
      if (/listening on port/.test(err)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited (${code}): ${err}`));
    });
  });
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => void child.kill('SIGKILL') };
}
