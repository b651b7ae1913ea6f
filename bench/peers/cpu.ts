// CPU and memory of processes from /proc: a system's server by its pid, and
// the PostgreSQL backends serving its database (found in pg_stat_activity).
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { ADMIN_URL } from './postgres.ts';

/** CPU seconds (user + system, every thread) the process has used; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

export const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** CPU seconds of each backend connected to the database now. */
export async function backendsCpu(database: string): Promise<Map<number, number>> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
    return new Map(rows.map((r) => [r.pid, cpuSeconds(r.pid)]));
  } finally {
    await admin.end();
  }
}

/** CPU the backends used between two readings; a backend that ended in between is not counted. */
export function backendsCpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, now] of after) seconds += now - (before.get(pid) ?? 0);
  return seconds;
}
