// The web console in a real headless browser (Debian's Chromium, driven by
// puppeteer-core) against a hub on a real port: sign in with a project key,
// watch a run stream its words live, approve a waiting run from the Waiting
// page and see it complete, redeliver a failed webhook delivery, deny a
// pending node. Every page load is checked for console errors and for any
// request to another origin. PALAI_CONSOLE_SCREENSHOTS=<dir> saves the
// screenshots docs/console.md shows.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { CONSOLE_CSP } from '../../adapters/console/static.js';
import { newIdentity, proofFor } from '../nodes/node-fixtures.js';
import { describeEachStore, withSlice } from '../support/hub.js';
import { listen, type Listening } from '../support/listen.js';
import { until } from '../support/until.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

// The functions given to page.evaluate run in the page: its globals, declared for this file only (no DOM library in the tests' program).
declare const window: { location: { hash: string }; sessionStorage: Storage; localStorage: Storage; seen: string[]; innerWidth: number };
declare const document: {
  querySelector(selector: string): { textContent: string | null } | null;
  body: { textContent: string | null };
  documentElement: { scrollWidth: number };
  activeElement: unknown;
};
declare const MutationObserver: new (callback: () => void) => { observe(target: unknown, options: Record<string, boolean>): void };
interface Storage {
  length: number;
  getItem(key: string): string | null;
}

const chromium = process.env.PALAI_TEST_CHROMIUM ?? '/usr/bin/chromium';
const unavailable = existsSync(chromium) ? null : `no Chromium at ${chromium} (apt-get install chromium, or set PALAI_TEST_CHROMIUM)`;
if (unavailable && process.env.PALAI_REQUIRE_SERVICES === '1') throw new Error(`${unavailable} (PALAI_REQUIRE_SERVICES=1)`);
const screenshots = process.env.PALAI_CONSOLE_SCREENSHOTS;

const STORY = 'Once upon a time the console showed every word';

await describeEachStore(
  'the web console in a browser',
  (ctx) => {
    let server: Listening;
    let browser: Browser;
    let page: Page;
    let receiver: Receiver;
    const problems: string[] = [];
    const foreign: string[] = [];

    const rest = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ctx().apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const answer = (await response.json()) as any;
      assert.ok(response.ok, `${method} ${path}: ${JSON.stringify(answer)}`);
      return answer;
    };
    const go = async (hash: string) => {
      await page.evaluate((h) => (window.location.hash = h), hash);
    };
    const textOf = (selector: string) => page.$eval(selector, (element) => element.textContent ?? '');
    const shot = async (name: string) => {
      if (!screenshots) return;
      mkdirSync(screenshots, { recursive: true });
      await page.screenshot({ path: join(screenshots, `console-${name}.png`) });
    };

    before(async () => {
      if (unavailable) return;
      server = await listen(ctx().hub.app);
      receiver = await startReceiver((n) => ({ status: n < 2 ? 500 : 204 }));
      browser = await puppeteer.launch({
        executablePath: chromium,
        headless: true,
        // Root in CI has no user namespace for Chromium's sandbox.
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'],
      });
      page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 860 });
      const origin = new URL(server.url).origin;
      page.on('console', (message) => {
        if (['error', 'warn', 'assert'].includes(message.type())) problems.push(`${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`pageerror: ${(error as Error).message}`));
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) foreign.push(url);
      });
    });
    after(async () => {
      await browser?.close();
      await receiver?.close();
      await server?.close();
    });

    test('the console is served under a strict Content-Security-Policy; sign in with the project key', { skip: unavailable ?? false }, async () => {
      const answer = await fetch(`${server.url}/console/`);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-security-policy'), CONSOLE_CSP);
      assert.match(CONSOLE_CSP, /script-src 'self'(;|$)/);
      const html = await answer.text();
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
      assert.doesNotMatch(html, /<style|\sstyle=/, 'no inline style');

      await page.goto(`${server.url}/console/`, { waitUntil: 'networkidle0' });
      const field = await page.waitForSelector('::-p-aria(API key)');
      // By keyboard: the key typed, Enter submits the form.
      await field!.type(ctx().apiKey);
      await page.keyboard.press('Enter');
      await page.waitForSelector('nav[aria-label="Main"]');
      await page.waitForSelector('::-p-aria(Runs)');
      assert.equal(await textOf('h1'), 'Runs');
      assert.equal(await page.evaluate(() => window.sessionStorage.getItem('palai.apiKey')), ctx().apiKey);
      assert.equal(await page.evaluate(() => window.localStorage.length), 0, 'the key is kept for the browser session only');
    });

    test('a run streams its words live on its page, then shows it completed', { skip: unavailable ?? false }, async () => {
      await rest('POST', '/v1/agents', { name: 'storyteller', model: { provider: 'fake', script: [{ text: STORY, delay_ms: 700 }] } });
      const run = await rest('POST', '/v1/responses', { model: 'storyteller', input: 'tell me', background: true });
      await go(`#/runs/${run.id}`);
      const output = await page.waitForSelector('[aria-label="Output text"]');
      // Every text the output shows, as it changes.
      await page.evaluate((element) => {
        const seen: string[] = [];
        window.seen = seen;
        new MutationObserver(() => seen.push(element!.textContent ?? '')).observe(element!, { childList: true, subtree: true, characterData: true });
      }, output);
      await page.waitForFunction(
        (full) =>
          document.querySelector('[aria-label="Status"]')?.textContent?.includes('completed') &&
          document.querySelector('[aria-label="Output text"]')?.textContent === full,
        { timeout: 60_000 },
        STORY,
      );
      const seen = await page.evaluate(() => window.seen);
      const partial = seen.filter((text) => text.length > 0 && text !== STORY);
      assert.ok(partial.length >= 2, `the words arrived one by one: ${JSON.stringify(seen)}`);
      for (const text of partial) assert.ok(STORY.startsWith(text), `${JSON.stringify(text)} is a beginning of the story`);
      assert.equal(await textOf('h1'), run.id);
      await shot('run');
      await go('#/runs');
      await page.waitForSelector(`::-p-aria(${run.id})`);
      await shot('runs');
    });

    test('a run waiting for approval is approved from the Waiting page and completes', { skip: unavailable ?? false }, async () => {
      await rest('POST', '/v1/agents', {
        name: 'careful',
        tools: [{ type: 'builtin', name: 'echo' }],
        approval: { tools: ['echo'] },
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'ship it' } }] }, { text: 'shipped' }] },
      });
      const run = await rest('POST', '/v1/responses', { model: 'careful', input: 'ship', background: true });
      await until('the run waits for approval', async () => (await rest('GET', `/v1/responses/${run.id}`)).palai_status === 'waiting_for_approval');
      await go('#/waiting');
      const article = await page.waitForSelector(`::-p-aria([name="${run.id}"][role="article"])`, { timeout: 30_000 });
      assert.match(await article!.evaluate((element) => element.textContent ?? ''), /ship it/);
      await shot('waiting');
      await (await article!.waitForSelector('::-p-aria(Approve)'))!.click();
      await until('the run completes', async () => (await rest('GET', `/v1/responses/${run.id}`)).palai_status === 'completed');
      await page.waitForFunction((id) => !document.body.textContent?.includes(id), { timeout: 30_000 }, run.id);
      await go(`#/runs/${run.id}`);
      await page.waitForFunction(() => document.querySelector('[aria-label="Status"]')?.textContent?.includes('completed'), { timeout: 30_000 });
      await page.waitForFunction(() => document.querySelector('[aria-label="Output text"]')?.textContent === 'shipped', { timeout: 30_000 });
    });

    test('a failed webhook delivery is redelivered from the Deliveries page', { skip: unavailable ?? false }, async () => {
      await rest('POST', '/v1/agents', { name: 'plain', model: { provider: 'fake' } });
      const endpoint = await rest('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['response.completed'] });
      await rest('POST', '/v1/responses', { model: 'plain', input: 'hello' });
      const dead = await until('the delivery is dead after its retry', async () => {
        const deliveries = await rest('GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries`);
        return deliveries.data.find((d: { status: string }) => d.status === 'dead');
      });
      assert.equal(receiver.received.length, 2);
      await go('#/deliveries');
      // Both of the page's lists loaded first: the endpoint's sits above the one of every delivery, and a
      // click must not land where a button was before the other list pushed it down.
      const table = await page.waitForSelector(`::-p-aria([name="Deliveries to ${endpoint.url}"][role="region"])`, { timeout: 30_000 });
      await page.waitForSelector('::-p-aria([name="All outbound deliveries"][role="region"]) ::-p-aria(Redeliver)', { timeout: 30_000 });
      const redeliver = await table!.waitForSelector('::-p-aria(Redeliver)');
      await redeliver!.click();
      await receiver.waitFor(3, 30_000);
      await until('the delivery is delivered', async () => {
        const again = await rest('GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries/${dead.id}`);
        return again.status === 'delivered';
      });
      await go('#/runs');
      await go('#/deliveries');
      await page.waitForFunction(() => document.querySelector('main')?.textContent?.includes('delivered'), { timeout: 30_000 });
      // The same delivery among all the project's outbound deliveries, with its kind.
      const outbox = await page.waitForSelector('::-p-aria([name="All outbound deliveries"][role="region"])', { timeout: 30_000 });
      const listed = await outbox!.evaluate((element) => (element as unknown as { textContent: string }).textContent);
      assert.ok(listed.includes(dead.id) && listed.includes('webhook'), listed);
    });

    test('a pending node is denied from the Nodes page', { skip: unavailable ?? false }, async () => {
      const nodes = withSlice(ctx().hub, 'nodes');
      const { token } = await nodes.nodeEnrollments.create(ctx().projectId, { max_uses: 1 });
      const admission = await nodes.nodeGateway.admit(proofFor(newIdentity()), token!);
      assert.equal(admission.state, 'pending_pairing');
      await go('#/nodes');
      await page.waitForSelector('::-p-aria(Pending pairings)');
      await (await page.waitForSelector('::-p-aria(Deny)', { timeout: 30_000 }))!.click();
      await until('the node is denied (revoked)', async () => {
        const listed = await rest('GET', '/v1/nodes');
        return listed.data.some((node: { state: string }) => node.state === 'revoked');
      });
      await page.waitForFunction(() => !document.querySelector('main')?.textContent?.includes('Deny'), { timeout: 30_000 });
    });

    test('every page fits a narrow screen, and the main navigation is reached by keyboard', { skip: unavailable ?? false }, async () => {
      await page.setViewport({ width: 375, height: 740 });
      try {
        for (const [hash, heading] of [
          ['#/runs', 'Runs'],
          ['#/waiting', 'Waiting for a person'],
          ['#/agents', 'Agents'],
          ['#/sessions', 'Sessions'],
          ['#/deliveries', 'Deliveries'],
          ['#/nodes', 'Nodes'],
          ['#/objectives', 'Objectives'],
        ]) {
          await go(hash);
          await page.waitForFunction((h) => document.querySelector('h1')?.textContent === h, { timeout: 30_000 }, heading);
          const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
          assert.ok(widths[0] <= widths[1], `${hash} is no wider than the screen (tables scroll inside): ${widths.join(' > ')}`);
        }
        // Tab reaches every link of the navigation. Focus starts at the last page's heading (a
        // navigation moves it there), so the presses go through that page's content, however
        // much of it has loaded, and round to the top: bounded by the page's focusable elements, not a count.
        await page.evaluate(() => (document.activeElement as { blur?: () => void } | null)?.blur?.());
        const reached = new Set<string>();
        const focusable = await page.evaluate(
          () =>
            (document as unknown as { querySelectorAll(s: string): { length: number } }).querySelectorAll(
              'a[href], button, input, select, textarea, [tabindex]',
            ).length,
        );
        for (let i = 0; i < focusable + 12 && reached.size < 7; i++) {
          await page.keyboard.press('Tab');
          const focused = await page.evaluate(() => {
            const element = document.activeElement as { closest(s: string): unknown; textContent: string | null } | null;
            return element?.closest('nav[aria-label="Main"] a') ? element.textContent : null;
          });
          if (focused) reached.add(focused);
        }
        assert.deepEqual([...reached].sort(), ['Agents', 'Deliveries', 'Nodes', 'Objectives', 'Runs', 'Sessions', 'Waiting']);
      } finally {
        await page.setViewport({ width: 1280, height: 860 });
      }
    });

    test('no page logged an error or a warning, and nothing was requested from another origin', { skip: unavailable ?? false }, () => {
      assert.deepEqual(problems, []);
      assert.deepEqual(foreign, []);
    });
  },
  {
    // Webhook endpoints keep their signing secrets encrypted; one retry, quickly, and the delivery is dead.
    secretKey: 'console-tests-secret-key-0123456789',
    webhookRetryScheduleMs: [100],
  },
  { stores: ['pglite'] },
);
