// `palai node status`: what a node's home says, read without changing it (a
// companion may be running on it): its id, its hub, its pairing, its ledger.
import { ledgerDir, readIdentity, readState } from './home.js';
import { ledgerSummary, readRecords } from './ledger.js';

/** The lines to print, or null when the home holds no identity yet. */
export function statusLines(home: string): string[] | null {
  const identity = readIdentity(home);
  if (!identity) return null;
  const state = readState(home);
  const admission = state.last_admission;
  const pairing = state.paired
    ? `paired${admission ? ` (last admitted ${admission.at} as ${admission.state}; approved: ${admission.allowed_commands.join(', ') || 'none'})` : ''}`
    : admission?.state === 'pending_pairing'
      ? `pending approval (since ${admission.at})`
      : 'not paired (never admitted)';
  const summary = ledgerSummary([...readRecords(ledgerDir(home)).values()]);
  const counts = Object.entries(summary.byState)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([state, n]) => `${state} ${n}`)
    .join(', ');
  return [
    `node id:  ${identity.nodeId}`,
    `hub:      ${state.hub ?? '(none yet)'}`,
    `pairing:  ${pairing}`,
    `ledger:   ${summary.total} invocation(s)${summary.total > 0 ? ` (${counts}); latest started ${summary.latest}` : ''}`,
  ];
}
