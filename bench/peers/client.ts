// The load generator's HTTP client: node:http over keep-alive connections, one
// pool per system. It runs in the bench's own process on the same two cores as
// the systems, so it is kept light (fetch cost about 1 ms of CPU a request
// here, this about 0.35 ms); every system is called the same way.
import { Agent, request } from 'node:http';

export type PostJson = (path: string, body: object) => Promise<unknown>;

/** A JSON POST to `base` with `headers`, over at most `sockets` kept-alive connections; a non-2xx answer throws. */
export function jsonPoster(base: string, headers: Record<string, string>, sockets: number): PostJson {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const sent = { ...headers, 'content-type': 'application/json' };
  return (path, body) =>
    new Promise((resolve, reject) => {
      const req = request(`${base}${path}`, { method: 'POST', headers: sent, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('end', () => {
          if (res.statusCode! < 200 || res.statusCode! >= 300) reject(new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
          else {
            try {
              resolve(JSON.parse(text));
            } catch (error) {
              reject(error as Error);
            }
          }
        });
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
}
