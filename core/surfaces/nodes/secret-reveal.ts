// The nodes wing's secret marker revealer (core/tools/secret-marker-port.ts):
// a node command's output names each secret it printed by a marker carrying
// the variable and the invocation (wire/secret-marker.ts). Before a model
// call, a marker is replaced by the value only when its invocation is a call
// of the same response with the same call id, the variable one of its bound
// secrets, and the stored value still the one its plan was bound to; any
// other marker stays as written. The value goes to the model and nowhere else.
import type { Item } from '../../../generated/schemas.js';
import type { SecretStore } from '../../secrets/secret-port.js';
import type { Queryable } from '../../store/db.js';
import type { SecretMarkerRevealer } from '../../tools/secret-marker-port.js';
import type { UnhashedPlan } from './wire/execution-plan.js';
import { secretDigest } from './wire/secret-digest.js';
import { mayHoldSecretMarker, SECRET_MARKERS } from './wire/secret-marker.js';

interface MarkedInvocation {
  id: string;
  call_id: string;
  plan: Pick<UnhashedPlan, 'secret_env'>;
  secret_refs: { name: string; secret_id: string }[] | null;
}

const marked = (item: Item): item is Item & { type: 'function_call_output'; call_id: string; output: string } =>
  item.type === 'function_call_output' && typeof item.output === 'string' && mayHoldSecretMarker(item.output);

export function createSecretMarkerRevealer(secrets: SecretStore): SecretMarkerRevealer {
  return {
    async reveal(q: Queryable, projectId: string, responseId: string, items: Item[]): Promise<Item[]> {
      const invocationIds = new Set<string>();
      for (const item of items) if (marked(item)) for (const m of item.output.matchAll(SECRET_MARKERS)) invocationIds.add(m[2]);
      if (invocationIds.size === 0) return items;
      const { rows } = await q.query<MarkedInvocation>(
        'SELECT id, call_id, plan, secret_refs FROM node_invocations WHERE id = ANY($1::text[]) AND project_id = $2 AND response_id = $3',
        [[...invocationIds], projectId, responseId],
      );
      const values = new Map<string, string>();
      for (const row of rows) {
        for (const ref of row.secret_refs ?? []) {
          const bound = row.plan.secret_env?.find((e) => e.name === ref.name);
          const value = await secrets.reveal(q, projectId, ref.secret_id).catch(() => null);
          // Deleted or replaced since: the marker stays, as it would for a secret never sent.
          if (bound && value !== null && value.length === bound.length && secretDigest(value) === bound.digest) {
            values.set(`${ref.name}@${row.id}`, value);
          }
        }
      }
      const callOf = new Map(rows.map((r) => [r.id, r.call_id]));
      return items.map((item) => {
        if (!marked(item)) return item;
        const output = item.output.replace(SECRET_MARKERS, (whole, name: string, invocationId: string) =>
          callOf.get(invocationId) === item.call_id ? (values.get(`${name}@${invocationId}`) ?? whole) : whole,
        );
        return output === item.output ? item : { ...item, output };
      });
    },
  };
}
