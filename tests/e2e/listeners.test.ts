// Who can reach what: `palai serve` listens on 127.0.0.1 unless HOST opens it
// wider; PALAI_ADMIN_PORT moves /metrics off the API port (so anonymous API
// callers never see the hub's figures) with the probes; and every role has a
// listener — a worker serves /metrics, /healthz and /readyz, so its step and
// takeover metrics can be scraped and it can be probed.
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { after, describe, test } from 'node:test';
import { cleanUpProcesses, freePort } from '../support/cli.js';
import { postgresUnavailable } from '../support/stores.js';
import { api, baseOf, createAgent, createBackground, logsOf, metricValue, useCluster, waitForTerminal } from './cluster.js';

const postgresReason = await postgresUnavailable();

after(cleanUpProcesses);

/** An address of this machine that is not loopback, if it has one. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

/** Whether a TCP connection to `url` is accepted (any HTTP answer counts). */
async function reachable(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(3_000) });
    return true;
  } catch {
    return false;
  }
}

const portOf = (url: string) => new URL(url).port;

describe('listeners of palai serve', { skip: postgresReason ?? false }, () => {
  const cluster = useCluster();

  test('the API listens on 127.0.0.1 by default, and on every address with HOST=0.0.0.0', async (t) => {
    const local = await cluster.start('local', 'api');
    assert.match(baseOf(local), /^http:\/\/127\.0\.0\.1:\d+$/, 'it says where it listens');
    assert.equal((await api(baseOf(local), 'GET', '/healthz')).status, 200);

    const open = await cluster.start('open', 'api', { HOST: '0.0.0.0' });
    if (!externalAddress) {
      t.diagnostic('this machine has no non-loopback IPv4 address; only the bind address reported is checked');
      return;
    }
    assert.equal(
      await reachable(`http://${externalAddress}:${portOf(baseOf(local))}/healthz`),
      false,
      `the default listener is not reachable at ${externalAddress}`,
    );
    assert.equal(await reachable(`http://${externalAddress}:${portOf(baseOf(open))}/healthz`), true, `HOST=0.0.0.0 is reachable at ${externalAddress}`);
  });

  test('with PALAI_ADMIN_PORT, /metrics is served only on the operator port; the probes on both', async () => {
    const adminPort = await freePort();
    const node = await cluster.start('admin', 'all', { PALAI_ADMIN_PORT: String(adminPort) });
    assert.equal(node.admin, `http://127.0.0.1:${adminPort}`, logsOf(node));
    const admin = node.admin!;

    const publicMetrics = await fetch(`${baseOf(node)}/metrics`);
    assert.equal(publicMetrics.status, 404, 'anonymous callers of the API port see no metrics');
    assert.match(publicMetrics.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const adminMetrics = await fetch(`${admin}/metrics`);
    assert.equal(adminMetrics.status, 200);
    assert.match(await adminMetrics.text(), /^palai_queue_depth /m);

    for (const base of [baseOf(node), admin]) {
      assert.equal((await api(base, 'GET', '/healthz')).status, 200, `/healthz on ${base}`);
      assert.equal((await api(base, 'GET', '/readyz')).status, 200, `/readyz on ${base}`);
    }
    const notApi = await api(admin, 'GET', '/v1/agents');
    assert.equal(notApi.status, 404, 'the operator port serves no API');
  });

  test('a worker serves /metrics, /healthz and /readyz, and the runs it made can be scraped there', async () => {
    const apiNode = await cluster.start('front', 'api');
    const worker = await cluster.start('runner', 'worker');
    assert.ok(worker.admin, logsOf(worker));
    assert.equal((await api(worker.admin!, 'GET', '/readyz')).status, 200);
    assert.equal((await api(worker.admin!, 'GET', '/healthz')).status, 200);
    assert.equal((await api(worker.admin!, 'GET', '/v1/agents')).status, 404, 'a worker serves no API');

    await createAgent(baseOf(apiNode), { name: 'echo', model: { provider: 'fake' } });
    const created = await createBackground(baseOf(apiNode), 'echo', 'counted by the worker');
    const done = await waitForTerminal(baseOf(apiNode), created.id, 30_000);
    assert.equal(done.status, 'completed');

    const metrics = await api(worker.admin!, 'GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.ok(metricValue(metrics.body, 'palai_model_step_seconds_count{provider="fake"}') >= 1, 'the step latency the worker measured');
    assert.equal(metricValue(metrics.body, 'palai_responses_finished_total{status="completed"}'), 1, 'the response the worker finished');
    const front = await api(baseOf(apiNode), 'GET', '/metrics');
    assert.equal(metricValue(front.body, 'palai_responses_finished_total{status="completed"}'), 0, 'the api process ran nothing');
  });
});
