// The minimal HTTP front of a peer: POST /respond {input} → {output_text},
// GET /healthz, on node:http, so the framework under it is all that differs.
import { createServer } from 'node:http';

export function serveJson(respond: (input: string) => Promise<string>, onClose: () => Promise<void>): void {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') return void res.end('ok');
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      respond((JSON.parse(body) as { input: string }).input).then(
        (text) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ output_text: text }));
        },
        (error: Error) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: error.message }));
        },
      );
    });
  });
  server.listen(Number(process.env.PORT), '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => void onClose().then(() => process.exit(0))));
}
