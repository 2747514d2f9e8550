/** Who a process is when it holds a lease or writes as an actor: built here, and only here. */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

export interface ProcessIdentity {
  /** `<host>:<pid>:<random>`: unique even across restarts on one host, as a lease holder must be. */
  id: string;
  hostname: string;
  pid: number;
}

/** A fresh identity for this process; each lease-holding role takes its own. */
export function processIdentity(): ProcessIdentity {
  const host = hostname();
  return { id: `${host}:${process.pid}:${randomUUID().slice(0, 8)}`, hostname: host, pid: process.pid };
}

/** The roles that write as the scheduler leader. */
export type LeaderRole = 'scheduler' | 'reaper' | 'reconciler';

/** The actor a leader-only loop writes into run events and the outbox: its role and the leader's holder id. */
export function leaderActor(role: LeaderRole, holder: string): string {
  return `${role}:${holder}`;
}
