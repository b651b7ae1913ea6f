// `palai outbox list|redeliver`: what operators do with outbound deliveries
// (webhooks, A2A push, queue results, ...) straight on the store: see which are
// pending, delivered or dead and why, and put a dead one back after fixing its cause.
import type { Command } from 'commander';
import { listDeliveries, redeliver } from '../../core/outbox/deliveries.js';
import { DELIVERY_STATUSES, type DeliveryRecord, type DeliveryStatus } from '../../core/outbox/outbox-port.js';
import type { CommandContext } from './context.js';
import { CliError } from './errors.js';
import { printTable } from './keys.js';
import { projectFor } from './project.js';
import { withStore } from './store.js';

const MAX_LIMIT = 1000;
/** How much of an error a table row shows; --json shows all of it. */
const ERROR_COLUMN_WIDTH = 60;

function parseStatus(value: string): DeliveryStatus {
  const status = DELIVERY_STATUSES.find((s) => s === value);
  if (!status) throw new CliError(`Unknown delivery status ${JSON.stringify(value)}; use ${DELIVERY_STATUSES.join(', ')}.`);
  return status;
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new CliError(`--limit takes a whole number from 1 to ${MAX_LIMIT}, not ${JSON.stringify(value)}.`);
  return limit;
}

/** When the status happened or will next change: the next attempt, the delivery, the death. */
function whenOf(delivery: DeliveryRecord): Date | null {
  switch (delivery.status) {
    case 'pending':
      return delivery.nextAttemptAt;
    case 'delivered':
      return delivery.deliveredAt;
    case 'dead':
      return delivery.deadAt;
    default: {
      const unreachable: never = delivery.status;
      throw new Error(`unknown delivery status ${String(unreachable)}`);
    }
  }
}

function cut(text: string | null): string {
  if (!text) return '-';
  const line = text.replace(/\s+/g, ' ');
  return line.length > ERROR_COLUMN_WIDTH ? `${line.slice(0, ERROR_COLUMN_WIDTH - 1)}…` : line;
}

export function registerOutbox(program: Command, context: CommandContext): void {
  const outbox = program.command('outbox').description('inspect outbound deliveries (webhooks, push notifications, queue results) and redeliver dead ones');

  outbox
    .command('list')
    .description('list deliveries, newest first; WHEN is the next attempt (pending), the delivery (delivered) or the death (dead)')
    .option('--status <status>', `only deliveries in this status: ${DELIVERY_STATUSES.join(', ')}`, parseStatus)
    .option('--consumer <name>', 'only deliveries of this consumer (webhook, a2a_push, ...)')
    .option('--project <id|name>', 'only deliveries of this project')
    .option('--limit <n>', `at most this many (1-${MAX_LIMIT})`, parseLimit, 50)
    .option('--json', 'print the deliveries as JSON, payloads and whole errors included')
    .action(async (options: { status?: DeliveryStatus; consumer?: string; project?: string; limit: number; json?: boolean }) => {
      await withStore(context, async (db) => {
        const project = options.project ? await projectFor(db, options.project) : null;
        const rows = await listDeliveries(db, { projectId: project?.id, status: options.status, consumer: options.consumer, limit: options.limit });
        if (options.json) {
          context.out(JSON.stringify(rows, null, 2));
          return;
        }
        if (rows.length === 0) {
          context.out('No deliveries match.');
          return;
        }
        printTable(
          context,
          ['ID', 'PROJECT', 'CONSUMER', 'TARGET', 'STATUS', 'ATTEMPTS', 'WHEN', 'LAST_ERROR'],
          rows.map((d) => [d.id, d.projectId, d.consumer, d.target, d.status, String(d.attempts), whenOf(d)?.toISOString() ?? '-', cut(d.lastError)]),
        );
      });
    });

  outbox
    .command('redeliver')
    .description('put a dead or delivered delivery back: pending, due now, attempts from zero, same id')
    .argument('<id>', 'the delivery id (dlv_…)')
    .action(async (id: string) => {
      await withStore(context, async (db) => {
        const outcome = await redeliver(db, id);
        switch (outcome) {
          case 'requeued':
            context.out(`Delivery ${id} is pending again; a running hub with its consumer attempts it now.`);
            return;
          case 'pending':
            throw new CliError(`Delivery ${id} is still pending; it is retried on its own (see palai outbox list --status pending).`);
          case 'not_found':
            throw new CliError(`No delivery ${JSON.stringify(id)}; see palai outbox list.`);
          default: {
            const unreachable: never = outcome;
            throw new Error(`unknown redeliver outcome ${String(unreachable)}`);
          }
        }
      });
    });
}
