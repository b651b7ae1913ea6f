// What the Kafka consumer tests share: a project of their own per test, the
// REST calls that make agents and consumers, a kafkajs producer and reader
// (the test's side of the topics), and ways to wait on the group's progress.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { AssignerProtocol, type Kafka, type KafkaMessage, type Message, type Producer } from 'kafkajs';
import type { Hub } from '../../cli/hub.js';
import { createTopic, kafkaClient } from '../support/brokers.js';
import type { TestHub } from '../support/hub.js';
import { assertMatchesSpec } from '../support/spec.js';

export const SETTINGS = { secretKey: 'kafka-queue-tests-secret-key-0123456789' };

/** Topic, group and agent names of one test, unique across runs against a shared broker. */
export const uniqueName = (label: string) => `${label}-${randomBytes(4).toString('hex')}`;

export interface Project {
  projectId: string;
  auth: { Authorization: string };
}

export async function freshProject(ctx: () => TestHub): Promise<Project> {
  const key = await ctx().newProjectKey();
  const principal = await ctx().hub.api.authenticate(key);
  return { projectId: principal!.projectId, auth: { Authorization: `Bearer ${key}` } };
}

export async function createAgent(ctx: () => TestHub, p: Project, name: string, script: unknown[] = [{ text: 'done' }]): Promise<void> {
  const res = await ctx()
    .http.post('/v1/agents')
    .set(p.auth)
    .send({ name, model: { provider: 'fake', script } });
  assert.equal(res.status, 201, res.text);
}

export async function createConsumer(ctx: () => TestHub, p: Project, body: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const res = await ctx().http.post('/v1/queue_consumers').set(p.auth).send(body);
  assertMatchesSpec(res, 'createQueueConsumer');
  assert.equal(res.status, 201, res.text);
  return res.body;
}

export async function setPaused(ctx: () => TestHub, p: Project, consumerId: string, paused: boolean): Promise<void> {
  const res = await ctx().http.patch(`/v1/queue_consumers/${consumerId}`).set(p.auth).send({ paused });
  assertMatchesSpec(res, 'updateQueueConsumer');
  assert.equal(res.status, 200, res.text);
}

export async function eventually<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

/** One counter of a hub's /metrics for a consumer (0 when absent). */
export async function consumerMetric(hub: Hub, consumerId: string, outcome: string): Promise<number> {
  const res = await request(hub.app).get('/metrics');
  const match = new RegExp(`palai_queue_messages_total\\{consumer="${consumerId}",outcome="${outcome}"\\} (\\d+)`).exec(res.text);
  return Number(match?.[1] ?? 0);
}

/** The test's side of a broker: topics, a producer, readers and the group's offsets. */
export class KafkaSide {
  readonly kafka: Kafka;
  private producer: Producer | null = null;

  constructor(readonly brokers: string[]) {
    this.kafka = kafkaClient(brokers);
  }

  async topics(partitions: number, ...labels: string[]): Promise<string[]> {
    const names = labels.map(uniqueName);
    // createTopic waits out a broker that does not host the new partitions yet.
    for (const [i, name] of names.entries()) await createTopic(this.brokers, name, i === 0 ? partitions : 1);
    return names;
  }

  async produce(topic: string, messages: Message[]): Promise<void> {
    if (!this.producer) {
      this.producer = this.kafka.producer({ allowAutoTopicCreation: false });
      await this.producer.connect();
    }
    await this.producer.send({ topic, messages });
  }

  /** Every record of `topic` from its start, once `count` have come (a reader group of its own, committing nothing). */
  async read(topic: string, count: number, timeoutMs = 45_000): Promise<KafkaMessage[]> {
    const consumer = this.kafka.consumer({ groupId: uniqueName('reader'), maxWaitTimeInMs: 200 });
    const got: KafkaMessage[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ autoCommit: false, eachMessage: async ({ message }) => void got.push(message) });
      await eventually(`${count} records are on ${topic} (${got.length} so far)`, async () => got.length >= count, timeoutMs);
    } finally {
      await consumer.disconnect();
    }
    return got;
  }

  /** What `groupId` has committed of each partition of `topic`, against its end ("committed/end"). */
  async progress(groupId: string, topic: string): Promise<string[]> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const ends = await admin.fetchTopicOffsets(topic);
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return ends.map((end) => `${committed.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1'}/${end.high}`);
    } finally {
      await admin.disconnect();
    }
  }

  /** Waits until `groupId` has committed every partition of `topic` up to its end (an empty partition needs no commit). */
  async waitCaughtUp(groupId: string, topic: string, timeoutMs = 60_000): Promise<void> {
    let last: string[] = [];
    try {
      await eventually(
        'the group has committed every record',
        async () => {
          // The group's coordinator may still be loading ("not the correct coordinator"): ask again.
          last = await this.progress(groupId, topic).catch(() => last);
          return (
            last.length > 0 &&
            last.every((entry) => {
              const [committed, end] = entry.split('/');
              return committed === end || (end === '0' && Number(committed) < 0);
            })
          );
        },
        timeoutMs,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; committed/end by partition: ${last.join(' ')}`);
    }
  }

  /** How many members `groupId` has now. */
  async members(groupId: string): Promise<number> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([groupId]);
      return groups[0]?.members.length ?? 0;
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * How many members of `groupId` hold partitions once it is stable: 0 while it
   * rebalances. A member counted by members() may not have its partitions yet,
   * and the old members keep fetching all of theirs until they rejoin.
   */
  async assignedMembers(groupId: string): Promise<number> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([groupId]);
      if (groups[0]?.state !== 'Stable') return 0;
      const holding = groups[0].members.filter((m) => {
        const assignment = AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment ?? {};
        return Object.values(assignment).some((partitions) => partitions.length > 0);
      });
      return holding.length;
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Moves an empty group back to the start of `topic`: every record comes
   * again. (A member of its own commits offset 0 of every partition; kafkajs's
   * admin.resetOffsets does the same but waits out a 5 s fetch.)
   */
  async rewind(groupId: string, topic: string): Promise<void> {
    const consumer = this.kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
    const joined = new Promise<number[]>((resolve) => consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => resolve(payload.memberAssignment[topic] ?? [])));
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => undefined });
      const partitions = await joined;
      await consumer.commitOffsets(partitions.map((partition) => ({ topic, partition, offset: '0' })));
    } finally {
      await consumer.disconnect();
    }
  }

  async close(): Promise<void> {
    await this.producer?.disconnect().catch(() => undefined);
  }
}

/** A header's text (kafkajs gives Buffers). */
export const header = (message: KafkaMessage, name: string) => message.headers?.[name]?.toString();
